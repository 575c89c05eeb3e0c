// The quorum microbenchmark's replica: it stores every write it has not lost and
// acknowledges it.
use hydroflow_datalog::datalog;

pub async fn run(my_id: Vec<u32>, leader_ids: Vec<u32>, losses: Vec<u32>, from_leader: Source, to_leader: Sink) {
    let df = datalog!(
        r#"
        .input myID `repeat_iter(my_id.clone()) -> map(|p| (p,))`
        .input leader `repeat_iter(leader_ids.clone()) -> map(|p| (p,))`
        .input lost `repeat_iter(losses.clone()) -> map(|k| (k,))`
        .async toReplica `null::<(u32,u32)>()` `source_stream(from_leader) -> map(|x| deserialize_from_bytes::<(u32,u32)>(x.unwrap().1).unwrap())`
        .async ack `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(to_leader)` `null::<(u32,u32,u32)>()`

        .persist stored
        stored(k, v) :- toReplica(k, v), !lost(k)
        ack@l(i, k, v) :~ toReplica(k, v), !lost(k), leader(l), myID(i)
        "#
    );
    launch_flow(df).await
}
