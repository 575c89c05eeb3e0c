// A second partitioning-with-dependencies microbenchmark, the leader: it broadcasts each
// request (a key) to the replicas and answers the client once all acknowledged, with the
// number of keys of the same bucket the replicas had stored.
use hydroflow_datalog::datalog;

pub async fn run(replica_ids: Vec<u32>, client_recv: Source, client_send: Sink, to_replica: Sink, from_replica: Source) {
    let df = datalog!(
        r#"
        .input replicas `repeat_iter(replica_ids.clone()) -> map(|r| (r,))`
        .input numReplicas `repeat_iter([(3,),])`
        .async request `null::<(u32,i64,u32)>()` `source_stream(client_recv) -> map(|x| deserialize_from_bytes::<(u32,i64,u32)>(x.unwrap().1).unwrap())`
        .async reply `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(client_send)` `null::<(i64,u32)>()`
        .async toReplica `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(to_replica)` `null::<(u32,i64,u32)>()`
        .async ack `null::<(u32,u32,i64,u32)>()` `source_stream(from_replica) -> map(|x| deserialize_from_bytes::<(u32,u32,i64,u32)>(x.unwrap().1).unwrap())`

        toReplica@r(c, id, k) :~ request(c, id, k), replicas(r)
        acks(i, c, id, n) :- ack(i, c, id, n)
        acks(i, c, id, n) :+ acks(i, c, id, n), !answered(c, id, _)
        ackCounts(c, id, count(i)) :- acks(i, c, id, _)
        answered(c, id, n) :- ackCounts(c, id, m), numReplicas(m), acks(_, c, id, n)
        reply@c(id, n) :~ answered(c, id, n)
        "#
    );
    launch_flow(df).await
}
