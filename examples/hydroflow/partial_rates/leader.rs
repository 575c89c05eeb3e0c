// A second partial-partitioning microbenchmark, the leader: it broadcasts the rate updates
// it receives and the client's orders to the replicas and answers the client with an order's
// price once every replica has quoted the same.
use hydroflow_datalog::datalog;

pub async fn run(replica_ids: Vec<u32>, rate_source: Source, client_recv: Source, client_send: Sink,
                 rate_sink: Sink, to_replica: Sink, from_replica: Source) {
    let df = datalog!(
        r#"
        .input replicas `repeat_iter(replica_ids.clone()) -> map(|p| (p,))`
        .input numReplicas `repeat_iter([(3,),])`
        .async rateIn `null::<(u32,u32)>()` `source_stream(rate_source) -> map(|x| deserialize_from_bytes::<(u32,u32)>(x.unwrap().1).unwrap())`
        .async rateToReplica `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(rate_sink)` `null::<(u32,u32)>()`
        .async orderToReplica `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(to_replica)` `null::<(u32,i64,u32)>()`
        .async quoteFromReplica `null::<(u32,u32,i64,u32)>()` `source_stream(from_replica) -> map(|v| deserialize_from_bytes::<(u32,u32,i64,u32)>(v.unwrap().1).unwrap())`
        .async clientIn `null::<(u32,i64,u32)>()` `source_stream(client_recv) -> map(|x| deserialize_from_bytes::<(u32,i64,u32)>(x.unwrap().1).unwrap())`
        .async clientOut `map(|(node_id, v)| (node_id, serialize_to_bytes(v))) -> dest_sink(client_send)` `null::<(i64,u32)>()`

        rateToReplica@addr(epoch, r) :~ rateIn(epoch, r), replicas(addr)
        orderToReplica@addr(client, id, amount) :~ clientIn(client, id, amount), replicas(addr)
        quotes(r, client, id, p) :- quoteFromReplica(r, client, id, p)
        quotes(r, client, id, p) :+ quotes(r, client, id, p), !quoted(client, id, _)
        quoteCounts(count(r), client, id, p) :- quotes(r, client, id, p)
        quoted(client, id, p) :- quoteCounts(n, client, id, p), numReplicas(n)
        clientOut@client(id, p) :~ quoted(client, id, p)
        "#
    );
    launch_flow(df).await
}
