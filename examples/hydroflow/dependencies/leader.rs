// The scaling paper's partitioning-with-dependencies microbenchmark, the leader: it
// broadcasts each request to the replicas and answers the client once all acknowledged.
use hydroflow_datalog::datalog;

pub async fn run(replica_ids: Vec<u32>, client_recv: Source, client_send: Sink, to_replica: Sink, from_replica: Source) {
    let df = datalog!(
        r#"
        .input replicas `repeat_iter(replica_ids.clone()) -> map(|r| (r,))`
        .input numReplicas `repeat_iter([(3,),])`
        .async request `null::<(u32,i64,u32)>()` `source_stream(client_recv) -> map(|x| deserialize_from_bytes::<(u32,i64,u32)>(x.unwrap().1).unwrap())`
        .async reply `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(client_send)` `null::<(i64,u32)>()`
        .async voteToReplica `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(to_replica)` `null::<(u32,i64,u32)>()`
        .async voteFromReplica `null::<(u32,u32,i64,u32)>()` `source_stream(from_replica) -> map(|x| deserialize_from_bytes::<(u32,u32,i64,u32)>(x.unwrap().1).unwrap())`

        voteToReplica@r(c, id, v) :~ request(c, id, v), replicas(r)
        allVotes(i, c, id, v) :- voteFromReplica(i, c, id, v)
        allVotes(i, c, id, v) :+ allVotes(i, c, id, v), !committed(c, id, _)
        voteCounts(c, id, count(i)) :- allVotes(i, c, id, _)
        committed(c, id, v) :- voteCounts(c, id, n), numReplicas(n), allVotes(_, c, id, v)
        reply@c(id, v) :~ committed(c, id, v)
        "#
    );
    launch_flow(df).await
}
