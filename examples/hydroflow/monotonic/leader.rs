// The scaling paper's monotonic decoupling microbenchmark, the leader: it broadcasts each
// request to the replicas, keeps the votes until the request commits (the `!committed`
// idiom: persistence with a monotone condition) and answers the client.
use hydroflow_datalog::datalog;

pub async fn run(replica_ids: Vec<u32>, client_recv: Source, client_send: Sink, to_replica: Sink, from_replica: Source) {
    let df = datalog!(
        r#"
        .input replica `repeat_iter(replica_ids.clone()) -> map(|r| (r,))`
        .input numReplicas `repeat_iter([(3,),])`
        .async request `null::<(u32,u32)>()` `source_stream(client_recv) -> map(|x| deserialize_from_bytes::<(u32,u32)>(x.unwrap().1).unwrap())`
        .async response `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(client_send)` `null::<(u32,)>()`
        .async toReplica `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(to_replica)` `null::<(u32,)>()`
        .async fromReplica `null::<(u32,u32)>()` `source_stream(from_replica) -> map(|x| deserialize_from_bytes::<(u32,u32)>(x.unwrap().1).unwrap())`

        .persist committed
        pending(c, v) :- request(c, v)
        pending(c, v) :+ pending(c, v), !committed(v)
        toReplica@r(v) :~ request(_, v), replica(r)
        allVotes(v, r) :- fromReplica(r, v)
        allVotes(v, r) :+ allVotes(v, r), !committed(v)
        numVotes(v, count(r)) :- allVotes(v, r)
        committed(v) :- numVotes(v, n), numReplicas(m), (n == m)
        response@c(v) :~ committed(v), pending(c, v)
        "#
    );
    launch_flow(df).await
}
