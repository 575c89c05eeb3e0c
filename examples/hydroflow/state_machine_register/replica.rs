// The state_machine_register microbenchmark's replica: a register to which it applies the
// writes in the order of their sequence numbers (its value is the write with the highest
// number seen so far), acknowledging each write with the register's value after it.
use hydroflow_datalog::datalog;

pub async fn run(my_id: Vec<u32>, peers: Vec<u32>, to_replica: Source, from_replica: Sink) {
    let df = datalog!(
        r#"
        .input myID `repeat_iter(my_id.clone()) -> map(|p| (p,))`
        .input leader `repeat_iter(peers.clone()) -> map(|p| (p,))`
        .async writeToReplica `null::<(u32,i64,u32)>()` `source_stream(to_replica) -> map(|x| deserialize_from_bytes::<(u32,i64,u32)>(x.unwrap().1).unwrap())`
        .async ackFromReplica `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(from_replica)` `null::<(u32,u32,i64,u32)>()`

        .persist applied
        applied(seq, v) :- writeToReplica(client, seq, v)
        lastSeq(max(seq)) :- applied(seq, v)
        register(v) :- lastSeq(s), applied(s, v)
        ackFromReplica@addr(i, client, seq, v) :~ writeToReplica(client, seq, w), register(v), leader(addr), myID(i)
        "#
    );
    launch_flow(df).await
}
