// The monotonic microbenchmark's replica: it votes for every value it does not refuse.
use hydroflow_datalog::datalog;

pub async fn run(my_id: Vec<u32>, leader_ids: Vec<u32>, refusals: Vec<u32>, from_leader: Source, to_leader: Sink) {
    let df = datalog!(
        r#"
        .input myID `repeat_iter(my_id.clone()) -> map(|p| (p,))`
        .input leader `repeat_iter(leader_ids.clone()) -> map(|p| (p,))`
        .input refuse `repeat_iter(refusals.clone()) -> map(|v| (v,))`
        .async toReplica `null::<(u32,)>()` `source_stream(from_leader) -> map(|x| deserialize_from_bytes::<(u32,)>(x.unwrap().1).unwrap())`
        .async fromReplica `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(to_leader)` `null::<(u32,u32)>()`

        fromReplica@l(i, v) :~ toReplica(v), leader(l), myID(i), !refuse(v)
        "#
    );
    launch_flow(df).await
}
