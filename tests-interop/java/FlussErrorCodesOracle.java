/*
 * Prints the official Apache Fluss Java client's error-code table (org.apache.fluss.rpc.protocol.Errors),
 * one JSON object a line, in the enum's order:
 *
 *   {"code":12,"name":"NOT_LEADER_OR_FOLLOWER","retriable":true,"invalid_metadata":true}
 *
 * retriable: the code's exception is a org.apache.fluss.exception.RetriableException;
 * invalid_metadata: it is an org.apache.fluss.exception.InvalidMetadataException.
 * rust/core/tests/interop_error_codes_java.rs compares it with fluss-writer's table
 * (tests-interop/java/error_codes.sh runs it). Reflection only, so one source compiles against
 * every client version; it needs no cluster.
 */
import java.lang.reflect.Method;

public final class FlussErrorCodesOracle {
  public static void main(String[] args) throws Exception {
    Class<?> errors = Class.forName("org.apache.fluss.rpc.protocol.Errors");
    Class<?> retriable = Class.forName("org.apache.fluss.exception.RetriableException");
    Class<?> invalidMetadata = Class.forName("org.apache.fluss.exception.InvalidMetadataException");
    Method code = errors.getMethod("code");
    Method exception = errors.getMethod("exception");
    StringBuilder out = new StringBuilder();
    for (Object value : (Object[]) errors.getMethod("values").invoke(null)) {
      Object e = exception.invoke(value);
      out.append("{\"code\":").append(code.invoke(value))
          .append(",\"name\":\"").append(((Enum<?>) value).name()).append('"')
          .append(",\"retriable\":").append(e != null && retriable.isInstance(e))
          .append(",\"invalid_metadata\":").append(e != null && invalidMetadata.isInstance(e))
          .append("}\n");
    }
    System.out.print(out);
  }
}
