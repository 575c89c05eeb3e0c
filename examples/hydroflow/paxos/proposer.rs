// A Paxos-like proposer (phase 2 of the scaling paper's Paxos, one proposer): it picks one
// value per slot among the client's requests, sends it with its ballot to the acceptors
// (p2a), counts their acceptances (p2b) and answers the client when a quorum accepted.
use hydroflow_datalog::datalog;

pub async fn run(acceptor_ids: Vec<u32>, client_recv: Source, client_send: Sink, to_acceptor: Sink, from_acceptor: Source) {
    let df = datalog!(
        r#"
        .input acceptors `repeat_iter(acceptor_ids.clone()) -> map(|a| (a,))`
        .input quorum `repeat_iter([(2,),])`
        .input startBallot `source_iter([(1,),]) -> persist()`

        .async clientIn `null::<(u32,i64,u32)>()` `source_stream(client_recv) -> map(|x| deserialize_from_bytes::<(u32,i64,u32)>(x.unwrap().1).unwrap())`
        .async clientOut `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(client_send)` `null::<(i64,u32)>()`
        .async p2a `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(to_acceptor)` `null::<(u32,i64,u32)>()`
        .async p2b `null::<(u32,u32,i64,u32,u32)>()` `source_stream(from_acceptor) -> map(|v| deserialize_from_bytes::<(u32,u32,i64,u32,u32)>(v.unwrap().1).unwrap())`

        .static ballots
        .persist clientOf
        .persist accepted
        .persist chosen
        .persist replied

        ballots(b) :- startBallot(b)
        maxBallot(max(b)) :- ballots(b)
        clientOf(client, slot) :- clientIn(client, slot, v)
        proposal(slot, choose(v)) :- clientIn(client, slot, v)
        p2a@a(b, slot, v) :~ proposal(slot, v), maxBallot(b), acceptors(a)
        accepted(a, b, slot, v) :- p2b(a, b, slot, v, m), (b == m)
        acceptCount(count(a), slot, v) :- accepted(a, b, slot, v)
        chosen(slot, v) :- acceptCount(n, slot, v), quorum(q), (n >= q)
        clientOut@client(slot, v) :~ chosen(slot, v), clientOf(client, slot), !replied(slot)
        replied(slot) :+ chosen(slot, _)
        "#
    );
    launch_flow(df).await
}
