// The co-hashing microbenchmark's replica: it keeps every value written under an id and
// answers a write with how many values the id has had: the storage and the requests
// meet on the id alone, so both partition by it.
use hydroflow_datalog::datalog;

pub async fn run(my_id: Vec<u32>, peers: Vec<u32>, to_replica: Source, from_replica: Sink) {
    let df = datalog!(
        r#"
        .input myID `repeat_iter(my_id.clone()) -> map(|p| (p,))`
        .input leader `repeat_iter(peers.clone()) -> map(|p| (p,))`
        .async voteToReplica `null::<(u32,i64,u32)>()` `source_stream(to_replica) -> map(|x| deserialize_from_bytes::<(u32,i64,u32)>(x.unwrap().1).unwrap())`
        .async voteFromReplica `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(from_replica)` `null::<(u32,u32,i64,u32)>()`

        .persist storage
        storage(id, v) :- voteToReplica(_, id, v)
        versions(id, count(v)) :- storage(id, v)
        voteFromReplica@addr(i, client, id, n) :~ voteToReplica(client, id, _), versions(id, n), leader(addr), myID(i)
        "#
    );
    launch_flow(df).await
}
