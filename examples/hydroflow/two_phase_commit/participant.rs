// Two-phase commit's participant: it votes yes on every transaction, logs commits and
// acknowledges them.
use hydroflow_datalog::datalog;

pub async fn run(my_id: Vec<u32>, peers: Vec<u32>, from_coordinator: Source, to_coordinator: Sink) {
    let df = datalog!(
        r#"
        .input myID `repeat_iter(my_id.clone()) -> map(|p| (p,))`
        .input coordinator `repeat_iter(peers.clone()) -> map(|p| (p,))`
        .input willing `repeat_iter([(1,),])`
        .async voteReq `null::<(u32,i64)>()` `source_stream(from_coordinator) -> map(|x| deserialize_from_bytes::<(u32,i64)>(x.unwrap().1).unwrap())`
        .async voteResp `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(to_coordinator)` `null::<(u32,u32,i64,u32)>()`
        .async commitReq `null::<(u32,i64)>()` `source_stream(from_coordinator) -> map(|x| deserialize_from_bytes::<(u32,i64)>(x.unwrap().1).unwrap())`
        .async ackResp `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(to_coordinator)` `null::<(u32,u32,i64)>()`

        .persist log
        voteResp@c(i, client, tid, ok) :~ voteReq(client, tid), coordinator(c), myID(i), willing(ok)
        log(client, tid) :- commitReq(client, tid)
        ackResp@c(i, client, tid) :~ commitReq(client, tid), coordinator(c), myID(i)
        "#
    );
    launch_flow(df).await
}
