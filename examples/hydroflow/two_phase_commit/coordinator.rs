// Two-phase commit's coordinator (the scaling paper's 2PC): it asks every participant to
// vote on a client's transaction, commits when all voted yes, and answers the client once
// every participant acknowledged the commit.
use hydroflow_datalog::datalog;

pub async fn run(peers: Vec<u32>, client_recv: Source, client_send: Sink, to_participant: Sink, from_participant: Source) {
    let df = datalog!(
        r#"
        .input participants `repeat_iter(peers.clone()) -> map(|p| (p,))`
        .input numParticipants `repeat_iter([(3 as u32,),])`

        .async clientIn `null::<(u32,i64)>()` `source_stream(client_recv) -> map(|x| deserialize_from_bytes::<(u32,i64)>(x.unwrap().1).unwrap())`
        .async clientOut `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(client_send)` `null::<(i64,)>()`
        .async voteReq `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(to_participant)` `null::<(u32,i64)>()`
        .async voteResp `null::<(u32,u32,i64,u32)>()` `source_stream(from_participant) -> map(|v| deserialize_from_bytes::<(u32,u32,i64,u32)>(v.unwrap().1).unwrap())`
        .async commitReq `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(to_participant)` `null::<(u32,i64)>()`
        .async ackResp `null::<(u32,u32,i64)>()` `source_stream(from_participant) -> map(|v| deserialize_from_bytes::<(u32,u32,i64)>(v.unwrap().1).unwrap())`

        .persist votes
        .persist sentCommit
        .persist acks
        .persist replied

        # phase 1: ask for votes
        voteReq@p(client, tid) :~ clientIn(client, tid), participants(p)
        votes(p, client, tid) :- voteResp(p, client, tid, ok), (ok == 1)
        numYes(count(p), client, tid) :- votes(p, client, tid)
        committed(client, tid) :- numYes(n, client, tid), numParticipants(n)

        # phase 2: commit, once
        commitReq@p(client, tid) :~ committed(client, tid), !sentCommit(client, tid), participants(p)
        sentCommit(client, tid) :+ committed(client, tid)
        acks(p, client, tid) :- ackResp(p, client, tid)
        numAcks(count(p), client, tid) :- acks(p, client, tid)
        done(client, tid) :- numAcks(n, client, tid), numParticipants(n)
        clientOut@client(tid) :~ done(client, tid), !replied(client, tid)
        replied(client, tid) :+ done(client, tid)
        "#
    );
    launch_flow(df).await
}
