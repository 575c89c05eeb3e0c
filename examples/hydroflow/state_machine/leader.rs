// The scaling paper's state-machine decoupling microbenchmark, the leader: it moves to a
// new ballot when its host ticks it (`periodic`), tells the replicas, broadcasts the
// client's requests and answers once every replica has voted with its highest ballot.
use hydroflow_datalog::datalog;

pub async fn run(replica_ids: Vec<u32>, periodic_source: Source, client_recv: Source, client_send: Sink,
                 ballot_sink: Sink, to_replica: Sink, from_replica: Source) {
    let df = datalog!(
        r#"
        .input replicas `repeat_iter(replica_ids.clone()) -> map(|p| (p,))`
        .input numReplicas `repeat_iter([(3,),])`
        .input startBallot `repeat_iter([(0 as u32,),])`
        .input periodic `source_stream(periodic_source) -> map(|_| ())`

        .async ballotToReplica `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(ballot_sink)` `null::<(u32,)>()`
        .async voteToReplica `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(to_replica)` `null::<(u32,i64,u32)>()`
        .async voteFromReplica `null::<(u32,u32,i64,u32,u32)>()` `source_stream(from_replica) -> map(|v| deserialize_from_bytes::<(u32,u32,i64,u32,u32)>(v.unwrap().1).unwrap())`
        .async clientIn `null::<(u32,i64,u32)>()` `source_stream(client_recv) -> map(|x| deserialize_from_bytes::<(u32,i64,u32)>(x.unwrap().1).unwrap())`
        .async clientOut `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(client_send)` `null::<(i64,u32,u32)>()`

        # a new ballot at every tick of the host's timer
        ballots(b) :- startBallot(b)
        maxBallot(max(b)) :- ballots(b)
        newBallot(b + 1) :- maxBallot(b), periodic()
        ballots(b) :+ maxBallot(b), !newBallot(_)
        ballots(b) :+ !maxBallot(_), newBallot(b)
        ballots(b) :+ newBallot(b)
        ballotToReplica@addr(b) :~ newBallot(b), replicas(addr)

        voteToReplica@addr(client, id, v) :~ clientIn(client, id, v), replicas(addr)
        allVotes(l, client, id, b, v) :- voteFromReplica(l, client, id, b, v)
        allVotes(l, client, id, b, v) :+ allVotes(l, client, id, b, v), !committed(client, id, _, _)
        voteCounts(count(l), client, id) :- allVotes(l, client, id, b, v)
        committed(client, id, b, v) :- voteCounts(n, client, id), numReplicas(n), allVotes(l, client, id, b, v)
        clientOut@client(id, b, v) :~ committed(client, id, b, v)
        "#
    );
    launch_flow(df).await
}
