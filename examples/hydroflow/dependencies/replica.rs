// The dependencies microbenchmark's replica: it stores each payload with its "hash"
// (payload % 10), from the next tick on, and acknowledges a request with the least stored
// payload of the same hash (a collision), or with the payload itself. The join of the
// request and the storage is on the hash only, a function of the payload: the dependency
// is the only partitioning key.
use hydroflow_datalog::datalog;

pub async fn run(my_id: Vec<u32>, leader_ids: Vec<u32>, from_leader: Source, to_leader: Sink) {
    let df = datalog!(
        r#"
        .input myID `repeat_iter(my_id.clone()) -> map(|p| (p,))`
        .input leader `repeat_iter(leader_ids.clone()) -> map(|p| (p,))`
        .async voteToReplica `null::<(u32,i64,u32)>()` `source_stream(from_leader) -> map(|x| deserialize_from_bytes::<(u32,i64,u32)>(x.unwrap().1).unwrap())`
        .async voteFromReplica `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(to_leader)` `null::<(u32,u32,i64,u32)>()`

        .persist storage
        hashed(v, v % 10) :- voteToReplica(_, _, v)
        storage(v, h) :+ hashed(v, h)
        collisions(h, min(v2)) :- hashed(v, h), storage(v2, h)
        voteFromReplica@l(i, c, id, v2) :~ voteToReplica(c, id, v), hashed(v, h), collisions(h, v2), leader(l), myID(i)
        voteFromReplica@l(i, c, id, v) :~ voteToReplica(c, id, v), hashed(v, h), !collisions(h, _), leader(l), myID(i)
        "#
    );
    launch_flow(df).await
}
