// The buckets microbenchmark's replica: it stores each key with its bucket (key / 10),
// from the next tick on, and acknowledges a request with the number of keys of its
// bucket stored before it (0 when none). The join of the request and the storage is on
// the bucket only, a function of the key: the dependency is the only partitioning key.
use hydroflow_datalog::datalog;

pub async fn run(my_id: Vec<u32>, leader_ids: Vec<u32>, from_leader: Source, to_leader: Sink) {
    let df = datalog!(
        r#"
        .input myID `repeat_iter(my_id.clone()) -> map(|p| (p,))`
        .input leader `repeat_iter(leader_ids.clone()) -> map(|p| (p,))`
        .async toReplica `null::<(u32,i64,u32)>()` `source_stream(from_leader) -> map(|x| deserialize_from_bytes::<(u32,i64,u32)>(x.unwrap().1).unwrap())`
        .async ack `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(to_leader)` `null::<(u32,u32,i64,u32)>()`

        .persist seen
        bucketed(k, k / 10) :- toReplica(_, _, k)
        seen(k, b) :+ bucketed(k, b)
        earlier(b, count(k2)) :- bucketed(k, b), seen(k2, b)
        ack@l(i, c, id, n) :~ toReplica(c, id, k), bucketed(k, b), earlier(b, n), leader(l), myID(i)
        ack@l(i, c, id, 0) :~ toReplica(c, id, k), bucketed(k, b), !earlier(b, _), leader(l), myID(i)
        "#
    );
    launch_flow(df).await
}
