// The functional microbenchmark's replica: it checks the signature and votes.
use hydroflow_datalog::datalog;

pub async fn run(my_id: Vec<u32>, peers: Vec<u32>, to_replica: Source, from_replica: Sink) {
    let df = datalog!(
        r#"
        .input myID `repeat_iter(my_id.clone()) -> map(|p| (p,))`
        .input leader `repeat_iter(peers.clone()) -> map(|p| (p,))`
        .input signingKey `repeat_iter([(7,),])`
        .async voteToReplica `null::<(u32,i64,u32,u32)>()` `source_stream(to_replica) -> map(|x| deserialize_from_bytes::<(u32,i64,u32,u32)>(x.unwrap().1).unwrap())`
        .async voteFromReplica `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(from_replica)` `null::<(u32,u32,i64,u32)>()`

        .persist storage
        storage(v) :- voteToReplica(client, id, v, s), signingKey(k), (s == v * 31 + k)
        voteFromReplica@addr(i, client, id, v) :~ voteToReplica(client, id, v, s), signingKey(k), (s == v * 31 + k), leader(addr), myID(i)
        "#
    );
    launch_flow(df).await
}
