// A second monotonic decoupling microbenchmark, the leader of a replicated write: it
// broadcasts each write to the replicas, keeps the acknowledgements until the write is
// durable (a quorum acknowledged: a threshold on a count, monotone, as the `!committed`
// idiom of the paper's monotonic microbenchmark) and answers the client.
use hydroflow_datalog::datalog;

pub async fn run(replica_ids: Vec<u32>, client_recv: Source, client_send: Sink, to_replica: Sink, from_replica: Source) {
    let df = datalog!(
        r#"
        .input replica `repeat_iter(replica_ids.clone()) -> map(|r| (r,))`
        .input quorum `repeat_iter([(2,),])`
        .async write `null::<(u32,u32,u32)>()` `source_stream(client_recv) -> map(|x| deserialize_from_bytes::<(u32,u32,u32)>(x.unwrap().1).unwrap())`
        .async done `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(client_send)` `null::<(u32,u32)>()`
        .async toReplica `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(to_replica)` `null::<(u32,u32)>()`
        .async ack `null::<(u32,u32,u32)>()` `source_stream(from_replica) -> map(|x| deserialize_from_bytes::<(u32,u32,u32)>(x.unwrap().1).unwrap())`

        .persist durable
        waiting(c, k, v) :- write(c, k, v)
        waiting(c, k, v) :+ waiting(c, k, v), !durable(k, v)
        toReplica@r(k, v) :~ write(_, k, v), replica(r)
        acks(k, v, r) :- ack(r, k, v)
        acks(k, v, r) :+ acks(k, v, r), !durable(k, v)
        numAcks(k, v, count(r)) :- acks(k, v, r)
        durable(k, v) :- numAcks(k, v, n), quorum(q), (n >= q)
        done@c(k, v) :~ durable(k, v), waiting(c, k, v)
        "#
    );
    launch_flow(df).await
}
