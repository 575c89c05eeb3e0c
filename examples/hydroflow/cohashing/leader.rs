// The scaling paper's co-hashing partitioning microbenchmark, the leader: it broadcasts
// each write to the replicas and answers the client once all acknowledged.
use hydroflow_datalog::datalog;

pub async fn run(replica_ids: Vec<u32>, client_recv: Source, client_send: Sink, to_replica: Sink, from_replica: Source) {
    let df = datalog!(
        r#"
        .input replicas `repeat_iter(replica_ids.clone()) -> map(|p| (p,))`
        .input numReplicas `repeat_iter([(3,),])`
        .async clientIn `null::<(u32,i64,u32)>()` `source_stream(client_recv) -> map(|x| deserialize_from_bytes::<(u32,i64,u32)>(x.unwrap().1).unwrap())`
        .async clientOut `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(client_send)` `null::<(i64,u32)>()`
        .async voteToReplica `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(to_replica)` `null::<(u32,i64,u32)>()`
        .async voteFromReplica `null::<(u32,u32,i64,u32)>()` `source_stream(from_replica) -> map(|v| deserialize_from_bytes::<(u32,u32,i64,u32)>(v.unwrap().1).unwrap())`

        voteToReplica@addr(client, id, v) :~ clientIn(client, id, v), replicas(addr)
        acks(l, client, id, n) :- voteFromReplica(l, client, id, n)
        acks(l, client, id, n) :+ acks(l, client, id, n), !answered(client, id)
        ackCounts(client, id, count(l)) :- acks(l, client, id, _)
        answered(client, id) :- ackCounts(client, id, m), numReplicas(m)
        clientOut@client(id, n) :~ answered(client, id), acks(_, client, id, n)
        "#
    );
    launch_flow(df).await
}
