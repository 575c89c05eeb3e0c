// A second state-machine decoupling microbenchmark, the leader: it broadcasts the client's
// writes (each with its sequence number) to the replicas and answers the client with the
// register's value once every replica has acknowledged the write with the same value.
use hydroflow_datalog::datalog;

pub async fn run(replica_ids: Vec<u32>, client_recv: Source, client_send: Sink, to_replica: Sink, from_replica: Source) {
    let df = datalog!(
        r#"
        .input replicas `repeat_iter(replica_ids.clone()) -> map(|p| (p,))`
        .input numReplicas `repeat_iter([(3,),])`
        .async clientIn `null::<(u32,i64,u32)>()` `source_stream(client_recv) -> map(|x| deserialize_from_bytes::<(u32,i64,u32)>(x.unwrap().1).unwrap())`
        .async clientOut `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(client_send)` `null::<(i64,u32)>()`
        .async writeToReplica `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(to_replica)` `null::<(u32,i64,u32)>()`
        .async ackFromReplica `null::<(u32,u32,i64,u32)>()` `source_stream(from_replica) -> map(|v| deserialize_from_bytes::<(u32,u32,i64,u32)>(v.unwrap().1).unwrap())`

        writeToReplica@addr(client, seq, v) :~ clientIn(client, seq, v), replicas(addr)
        acks(r, client, seq, v) :- ackFromReplica(r, client, seq, v)
        acks(r, client, seq, v) :+ acks(r, client, seq, v), !acked(client, seq, _)
        ackCounts(count(r), client, seq, v) :- acks(r, client, seq, v)
        acked(client, seq, v) :- ackCounts(n, client, seq, v), numReplicas(n)
        clientOut@client(seq, v) :~ acked(client, seq, v)
        "#
    );
    launch_flow(df).await
}
