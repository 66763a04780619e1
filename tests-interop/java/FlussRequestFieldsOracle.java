/*
 * The Fluss 1.0 request and response fields for per-partition bucket counts (and the
 * `original_partition_name` of writes and lookups for historical partitions), decoded by the
 * official Apache Fluss Java client's generated message classes (fluss-client 1.0.0): the oracle
 * that fluss-writer's encoder puts each field under the field number Java reads it from.
 *
 *   java FlussRequestFieldsOracle  < messages
 *
 * stdin: one message per line, "<MessageName> TAB <hex of the protobuf body>", MessageName one of
 * ProduceLogRequest, PutKvRequest, LookupRequest, FetchLogRequest, ListOffsetsRequest,
 * AlterTableRequest, GetTableInfoResponse, MetadataResponse, ListPartitionInfosResponse. stdout: one JSON object per line, in input order, with the fields
 * that per-partition bucket counts add (null where a field is absent) and enough of the others
 * to tell the entries apart. Exit code 0 = every line decoded, 1 = an error (on stderr).
 */

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

import org.apache.fluss.rpc.messages.AlterTableRequest;
import org.apache.fluss.rpc.messages.FetchLogRequest;
import org.apache.fluss.rpc.messages.ListOffsetsRequest;
import org.apache.fluss.rpc.messages.LookupRequest;
import org.apache.fluss.rpc.messages.PbFetchLogReqForBucket;
import org.apache.fluss.rpc.messages.PbFetchLogReqForTable;
import org.apache.fluss.rpc.messages.PbLookupReqForBucket;
import org.apache.fluss.rpc.messages.GetTableInfoResponse;
import org.apache.fluss.rpc.messages.ListPartitionInfosResponse;
import org.apache.fluss.rpc.messages.MetadataResponse;
import org.apache.fluss.rpc.messages.PbPartitionInfo;
import org.apache.fluss.rpc.messages.PbPartitionMetadata;
import org.apache.fluss.rpc.messages.PbProduceLogReqForBucket;
import org.apache.fluss.rpc.messages.PbPutKvReqForBucket;
import org.apache.fluss.rpc.messages.PbTableMetadata;
import org.apache.fluss.rpc.messages.ProduceLogRequest;
import org.apache.fluss.rpc.messages.PutKvRequest;

public class FlussRequestFieldsOracle {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            String[] parts = line.split("\t", 2);
            byte[] body = hex(parts.length > 1 ? parts[1] : "");
            out.append(decode(parts[0], body)).append('\n');
        }
        System.out.print(out);
        System.out.flush();
    }

    /** A JSON string (a plain name: no escaping needed), or null when the field is absent. */
    static String quoted(boolean present, String value) {
        return present ? "\"" + value + "\"" : "null";
    }

    static String decode(String name, byte[] body) {
        StringBuilder j = new StringBuilder("{\"msg\":\"").append(name).append('"');
        switch (name) {
            case "ProduceLogRequest": {
                ProduceLogRequest r = new ProduceLogRequest();
                r.parseFrom(body);
                j.append(",\"table_id\":").append(r.getTableId()).append(",\"buckets\":[");
                String sep = "";
                for (PbProduceLogReqForBucket b : r.getBucketsReqsList()) {
                    j.append(sep).append("{\"partition_id\":").append(b.hasPartitionId() ? String.valueOf(b.getPartitionId()) : "null")
                            .append(",\"bucket_id\":").append(b.getBucketId())
                            .append(",\"routing_bucket_count\":")
                            .append(b.hasRoutingBucketCount() ? String.valueOf(b.getRoutingBucketCount()) : "null")
                            .append(",\"original_partition_name\":").append(quoted(b.hasOriginalPartitionName(), b.hasOriginalPartitionName() ? b.getOriginalPartitionName() : null))
                            .append('}');
                    sep = ",";
                }
                j.append(']');
                break;
            }
            case "PutKvRequest": {
                PutKvRequest r = new PutKvRequest();
                r.parseFrom(body);
                j.append(",\"table_id\":").append(r.getTableId()).append(",\"buckets\":[");
                String sep = "";
                for (PbPutKvReqForBucket b : r.getBucketsReqsList()) {
                    j.append(sep).append("{\"partition_id\":").append(b.hasPartitionId() ? String.valueOf(b.getPartitionId()) : "null")
                            .append(",\"bucket_id\":").append(b.getBucketId())
                            .append(",\"routing_bucket_count\":")
                            .append(b.hasRoutingBucketCount() ? String.valueOf(b.getRoutingBucketCount()) : "null")
                            .append(",\"original_partition_name\":").append(quoted(b.hasOriginalPartitionName(), b.hasOriginalPartitionName() ? b.getOriginalPartitionName() : null))
                            .append('}');
                    sep = ",";
                }
                j.append(']');
                break;
            }
            case "LookupRequest": {
                LookupRequest r = new LookupRequest();
                r.parseFrom(body);
                j.append(",\"table_id\":").append(r.getTableId()).append(",\"buckets\":[");
                String sep = "";
                for (PbLookupReqForBucket b : r.getBucketsReqsList()) {
                    j.append(sep).append("{\"bucket_id\":").append(b.getBucketId()).append(",\"routing_bucket_count\":")
                            .append(b.hasRoutingBucketCount() ? String.valueOf(b.getRoutingBucketCount()) : "null")
                            .append(",\"original_partition_name\":").append(quoted(b.hasOriginalPartitionName(), b.hasOriginalPartitionName() ? b.getOriginalPartitionName() : null))
                            .append('}');
                    sep = ",";
                }
                j.append(']');
                break;
            }
            case "FetchLogRequest": {
                FetchLogRequest r = new FetchLogRequest();
                r.parseFrom(body);
                j.append(",\"buckets\":[");
                String sep = "";
                for (PbFetchLogReqForTable t : r.getTablesReqsList()) {
                    for (PbFetchLogReqForBucket b : t.getBucketsReqsList()) {
                        j.append(sep).append("{\"bucket_id\":").append(b.getBucketId()).append(",\"routing_bucket_count\":")
                                .append(b.hasRoutingBucketCount() ? String.valueOf(b.getRoutingBucketCount()) : "null").append('}');
                        sep = ",";
                    }
                }
                j.append(']');
                break;
            }
            case "ListOffsetsRequest": {
                ListOffsetsRequest r = new ListOffsetsRequest();
                r.parseFrom(body);
                j.append(",\"table_id\":").append(r.getTableId()).append(",\"routing_bucket_count\":")
                        .append(r.hasRoutingBucketCount() ? String.valueOf(r.getRoutingBucketCount()) : "null");
                break;
            }
            case "AlterTableRequest": {
                AlterTableRequest r = new AlterTableRequest();
                r.parseFrom(body);
                j.append(",\"table\":\"").append(r.getTablePath().getTableName()).append('"')
                        .append(",\"new_bucket_count\":")
                        .append(r.hasModifyBucketCount() ? String.valueOf(r.getModifyBucketCount().getNewBucketCount()) : "null");
                break;
            }
            case "GetTableInfoResponse": {
                GetTableInfoResponse r = new GetTableInfoResponse();
                r.parseFrom(body);
                j.append(",\"table_id\":").append(r.getTableId()).append(",\"bucket_count_epoch\":")
                        .append(r.hasBucketCountEpoch() ? String.valueOf(r.getBucketCountEpoch()) : "null");
                break;
            }
            case "MetadataResponse": {
                MetadataResponse r = new MetadataResponse();
                r.parseFrom(body);
                j.append(",\"tables\":[");
                String sep = "";
                for (PbTableMetadata t : r.getTableMetadatasList()) {
                    j.append(sep).append("{\"table_id\":").append(t.getTableId()).append(",\"bucket_count_epoch\":")
                            .append(t.hasBucketCountEpoch() ? String.valueOf(t.getBucketCountEpoch()) : "null").append('}');
                    sep = ",";
                }
                j.append("],\"partitions\":[");
                sep = "";
                for (PbPartitionMetadata p : r.getPartitionMetadatasList()) {
                    j.append(sep).append("{\"partition_name\":\"").append(p.getPartitionName()).append("\",\"bucket_count\":")
                            .append(p.hasBucketCount() ? String.valueOf(p.getBucketCount()) : "null").append('}');
                    sep = ",";
                }
                j.append(']');
                break;
            }
            case "ListPartitionInfosResponse": {
                ListPartitionInfosResponse r = new ListPartitionInfosResponse();
                r.parseFrom(body);
                j.append(",\"partitions\":[");
                String sep = "";
                for (PbPartitionInfo p : r.getPartitionsInfosList()) {
                    j.append(sep).append("{\"partition_id\":").append(p.getPartitionId()).append(",\"bucket_count\":")
                            .append(p.hasBucketCount() ? String.valueOf(p.getBucketCount()) : "null").append('}');
                    sep = ",";
                }
                j.append(']');
                break;
            }
            default:
                System.err.println("unknown message " + name);
                System.exit(1);
        }
        return j.append('}').toString();
    }

    static byte[] hex(String s) {
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }
}
