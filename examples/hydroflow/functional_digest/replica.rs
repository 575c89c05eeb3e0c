// The functional_digest microbenchmark's replica: it keeps each request and, apart from
// that, hashes it with a pure computation of the request alone (no state read) and sends
// the digest to the leader.
use hydroflow_datalog::datalog;

pub async fn run(my_id: Vec<u32>, peers: Vec<u32>, to_replica: Source, from_replica: Sink) {
    let df = datalog!(
        r#"
        .input myID `repeat_iter(my_id.clone()) -> map(|p| (p,))`
        .input leader `repeat_iter(peers.clone()) -> map(|p| (p,))`
        .async toReplica `null::<(u32,i64,u32)>()` `source_stream(to_replica) -> map(|x| deserialize_from_bytes::<(u32,i64,u32)>(x.unwrap().1).unwrap())`
        .async fromReplica `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(from_replica)` `null::<(u32,u32,i64,u32)>()`

        .persist requests
        requests(id, v) :- toReplica(client, id, v)
        digest(client, id, (v * 31 + id) % 1009) :- toReplica(client, id, v)
        fromReplica@addr(i, client, id, d) :~ digest(client, id, d), leader(addr), myID(i)
        "#
    );
    launch_flow(df).await
}
