// The state-machine microbenchmark's replica: it keeps every ballot it is told, stores
// each payload and votes with its highest ballot (a state machine over its inputs).
use hydroflow_datalog::datalog;

pub async fn run(my_id: Vec<u32>, peers: Vec<u32>, ballot_source: Source, to_replica: Source, from_replica: Sink) {
    let df = datalog!(
        r#"
        .input myID `repeat_iter(my_id.clone()) -> map(|p| (p,))`
        .input leader `repeat_iter(peers.clone()) -> map(|p| (p,))`
        .async ballotToReplica `null::<(u32,)>()` `source_stream(ballot_source) -> map(|x| deserialize_from_bytes::<(u32,)>(x.unwrap().1).unwrap())`
        .async voteToReplica `null::<(u32,i64,u32)>()` `source_stream(to_replica) -> map(|x| deserialize_from_bytes::<(u32,i64,u32)>(x.unwrap().1).unwrap())`
        .async voteFromReplica `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(from_replica)` `null::<(u32,u32,i64,u32,u32)>()`

        ballots(b) :+ ballots(b)
        ballots(b) :- ballotToReplica(b)
        maxBallot(max(b)) :- ballots(b)
        .persist storage
        storage(v) :- voteToReplica(client, id, v)
        voteFromReplica@addr(i, client, id, b, v) :~ voteToReplica(client, id, v), maxBallot(b), leader(addr), myID(i)
        "#
    );
    launch_flow(df).await
}
