// The scaling paper's functional decoupling microbenchmark, the leader: it "signs" each
// request (a function of the request and its key alone, no state) before broadcasting it,
// and answers the client once every replica has voted.
use hydroflow_datalog::datalog;

pub async fn run(replica_ids: Vec<u32>, client_recv: Source, client_send: Sink, to_replica: Sink, from_replica: Source) {
    let df = datalog!(
        r#"
        .input replicas `repeat_iter(replica_ids.clone()) -> map(|p| (p,))`
        .input numReplicas `repeat_iter([(3,),])`
        .input signingKey `repeat_iter([(7,),])`
        .async clientIn `null::<(u32,i64,u32)>()` `source_stream(client_recv) -> map(|x| deserialize_from_bytes::<(u32,i64,u32)>(x.unwrap().1).unwrap())`
        .async clientOut `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(client_send)` `null::<(i64,u32)>()`
        .async voteToReplica `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(to_replica)` `null::<(u32,i64,u32,u32)>()`
        .async voteFromReplica `null::<(u32,u32,i64,u32)>()` `source_stream(from_replica) -> map(|v| deserialize_from_bytes::<(u32,u32,i64,u32)>(v.unwrap().1).unwrap())`

        signed(client, id, v, v * 31 + k) :- clientIn(client, id, v), signingKey(k)
        voteToReplica@addr(client, id, v, s) :~ signed(client, id, v, s), replicas(addr)
        allVotes(l, client, id, v) :- voteFromReplica(l, client, id, v)
        allVotes(l, client, id, v) :+ allVotes(l, client, id, v), !committed(client, id, _)
        voteCounts(count(l), client, id) :- allVotes(l, client, id, v)
        committed(client, id, v) :- voteCounts(n, client, id), numReplicas(n), allVotes(l, client, id, v)
        clientOut@client(id, v) :~ committed(client, id, v)
        "#
    );
    launch_flow(df).await
}
