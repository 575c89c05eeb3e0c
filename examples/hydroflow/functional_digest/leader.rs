// A second functional decoupling microbenchmark, the leader: it broadcasts each request to
// the replicas and answers the client with the digest once every replica has sent the same.
use hydroflow_datalog::datalog;

pub async fn run(replica_ids: Vec<u32>, client_recv: Source, client_send: Sink, to_replica: Sink, from_replica: Source) {
    let df = datalog!(
        r#"
        .input replicas `repeat_iter(replica_ids.clone()) -> map(|p| (p,))`
        .input numReplicas `repeat_iter([(3,),])`
        .async clientIn `null::<(u32,i64,u32)>()` `source_stream(client_recv) -> map(|x| deserialize_from_bytes::<(u32,i64,u32)>(x.unwrap().1).unwrap())`
        .async clientOut `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(client_send)` `null::<(i64,u32)>()`
        .async toReplica `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(to_replica)` `null::<(u32,i64,u32)>()`
        .async fromReplica `null::<(u32,u32,i64,u32)>()` `source_stream(from_replica) -> map(|v| deserialize_from_bytes::<(u32,u32,i64,u32)>(v.unwrap().1).unwrap())`

        toReplica@addr(client, id, v) :~ clientIn(client, id, v), replicas(addr)
        digests(r, client, id, d) :- fromReplica(r, client, id, d)
        digests(r, client, id, d) :+ digests(r, client, id, d), !answered(client, id, _)
        digestCounts(count(r), client, id, d) :- digests(r, client, id, d)
        answered(client, id, d) :- digestCounts(n, client, id, d), numReplicas(n)
        clientOut@client(id, d) :~ answered(client, id, d)
        "#
    );
    launch_flow(df).await
}
