/*
 * Primary-key lookups with the official Apache Fluss Java client (fluss-client 0.9.1): the oracle
 * that fluss-writer places rows in the bucket Java expects.
 *
 *   java FlussLookupOracle <bootstrap servers> <database.table>  < keys
 *
 * stdin: one key per line, the primary-key values in primary-key order, separated by TABs.
 * stdout: one line per key, in input order: "MISSING", or "FOUND" followed by every column of the
 * row in schema order, TAB separated. Values (both directions) use one canonical text form:
 *
 *   null \N | BOOLEAN true/false | TINYINT..BIGINT, DATE (days), TIME (ms of day): decimal
 *   FLOAT f:<8 hex digits of the IEEE bits> | DOUBLE d:<16 hex digits>
 *   STRING with \\ \t \n escaped | BYTES x:<hex> | DECIMAL <unscaled integer>
 *   TIMESTAMP, TIMESTAMP_LTZ <epoch millis>.<nanos of milli>
 *
 * All lookups are issued at once and awaited in order. Exit code 0 = every lookup answered
 * (found or not), 1 = an error (printed to stderr).
 *
 *   java FlussLookupOracle --partition-names <TYPE>[,<TYPE>...]  < values
 *   java FlussLookupOracle --partition-names-batch  < cases   (many of them in one JVM: partitionNamesBatch)
 *
 * Partition names as Fluss forms them (PartitionUtils.convertValueOfType per value, joined with
 * '$' as ResolvedPartitionSpec does): stdin has one line per row, the values of the partition keys
 * in the canonical form above, TAB separated; stdout one name per line. TYPE is BOOLEAN, TINYINT,
 * SMALLINT, INT, BIGINT, FLOAT, DOUBLE, STRING, BYTES, DATE, TIME, TIMESTAMP or TIMESTAMP_LTZ.
 *
 *   java FlussLookupOracle --key-vectors <FORMAT> <TYPE>[;<TYPE>...] <buckets>  < values
 *   java FlussLookupOracle --key-vectors-batch  < cases   (many of the above in one JVM: keyVectorsBatch)
 *
 * Key bytes and buckets as the Java client computes them for a bucket key of those column types
 * in a table with datalake format FORMAT (paimon, iceberg, lance, or none): KeyEncoder
 * .ofBucketKeyEncoder and BucketingFunction.of. stdin: one key per line (values as above, TAB
 * separated); stdout: "<hex of the key bytes> TAB <bucket>", or "ERROR TAB <message>" where the
 * Java classes refuse the key. TYPE is one of the names above or DECIMAL(p,s), TIME(p), CHAR(n), BINARY(n), TIMESTAMP(p),
 * TIMESTAMP_LTZ(p) (a plain TIMESTAMP / TIMESTAMP_LTZ is precision 9 here).
 *
 *   java FlussLookupOracle --java-version
 *
 * The feature version of the JVM (Hudi keys of FLOAT / DOUBLE values carry Java's
 * Double.toString, whose digits changed in JDK 19).
 *
 *   java FlussLookupOracle --auto-partition  < cases          (fluss-client 1.0 or later)
 *
 * Auto-partition names as Fluss 1.0 forms them (PartitionUtils.validateTimeFormat,
 * generateAutoPartitionTime, validateAutoPartitionTime; called by reflection so that this file
 * still compiles against 0.9.1). stdin, one case a line, TAB separated: time unit, time format
 * (\N: none), time zone, epoch millis, offset, num-retention, a partition value to check.
 * stdout, one line a case: "BADFORMAT TAB <message>" where the coordinator refuses the format,
 * else "<name of the partition offset units after the one holding the time> TAB <check>",
 * check being OK, or FORMAT / OUTDATED / ERROR followed by TAB and the message, for the value
 * (validateAutoPartitionTime at the current time: a partition the client would not create).
 *
 *   java FlussLookupOracle --row-vectors <TYPE>[;<TYPE>...]  < rows
 *   java FlussLookupOracle --row-vectors-batch  < cases   (many of them in one JVM: rowVectorsBatch)
 *
 * Row bytes and Arrow vectors as the Java client writes them for a row type with columns c0, c1,
 * ... of those types (each nullable unless its TYPE ends with " NOT NULL"). TYPE may also be
 * nested, to any depth, as fluss-writer prints it: ARRAY<T>, MAP<K, V>, ROW<name T, name2 T2>,
 * where every element/key/value/field type may end with " NOT NULL" (MAP keys are always NOT
 * NULL in Fluss). stdin: one row per line, the column values TAB separated (canonical form).
 * stdout, first one line per row, in input order:
 *   C TAB <hex of the CompactedRow bytes>  from a fresh CompactedRowEncoder(DataType[]) per row
 *   C TAB ERROR TAB <message>              where that encoder throws (e.g. null in a NOT NULL ROW field)
 * then, for all rows as one batch (ArrowUtils.toArrowSchema + createArrowFieldWriter per column,
 * write(rowIndex, row, column, true), root.setRowCount(n), new VectorUnloader(root).getRecordBatch()):
 *   N TAB <length> TAB <null count>        one line per field node, in the batch's (depth-first) order
 *   B TAB <hex>                            then one line per buffer, in the batch's order
 * or a single "A TAB ERROR TAB <message>" where Fluss's Arrow writer throws. A buffer's bytes are
 * ArrowBuf bytes 0 .. writerIndex(), i.e. exactly what VectorUnloader counts for the buffer,
 * WITHOUT the zero padding to 8 that the IPC serializer adds (an empty buffer prints "B TAB").
 * Every vector has its validity buffer, also columns without nulls and NOT NULL ones.
 *
 * Nested values in the canonical form (both directions, recursively; \N is null at any level):
 *   ARRAY [v1,v2,...] ([] empty) | MAP {k1=v1,k2=v2} ({} empty; entry order kept) |
 *   ROW (v1,v2,...) (one value per field). Scalars inside them use the scalar forms above, but a
 *   STRING / CHAR inside a nested value also escapes , = [ ] { } ( ) with a backslash (top-level
 *   strings keep the plain escaping). Any backslash-escaped character is read as itself. An
 *   ARRAY holding just one empty string prints as [] as well (reads back as an empty array).
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.fluss.bucketing.BucketingFunction;
import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.lookup.LookupResult;
import org.apache.fluss.client.lookup.Lookuper;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.DataLakeFormat;
import org.apache.fluss.metadata.TableInfo;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.DataGetters;
import org.apache.fluss.row.Decimal;
import org.apache.fluss.row.GenericArray;
import org.apache.fluss.row.GenericMap;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.InternalArray;
import org.apache.fluss.row.InternalMap;
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.row.TimestampLtz;
import org.apache.fluss.row.TimestampNtz;
import org.apache.fluss.row.arrow.writers.ArrowFieldWriter;
import org.apache.fluss.row.compacted.CompactedRow;
import org.apache.fluss.row.encode.CompactedRowEncoder;
import org.apache.fluss.row.encode.KeyEncoder;
import org.apache.fluss.metadata.ResolvedPartitionSpec;
import org.apache.fluss.shaded.arrow.org.apache.arrow.memory.ArrowBuf;
import org.apache.fluss.shaded.arrow.org.apache.arrow.memory.BufferAllocator;
import org.apache.fluss.shaded.arrow.org.apache.arrow.memory.RootAllocator;
import org.apache.fluss.shaded.arrow.org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.fluss.shaded.arrow.org.apache.arrow.vector.VectorUnloader;
import org.apache.fluss.shaded.arrow.org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.fluss.shaded.arrow.org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.fluss.types.ArrayType;
import org.apache.fluss.types.DataField;
import org.apache.fluss.types.DataType;
import org.apache.fluss.types.DataTypes;
import org.apache.fluss.types.MapType;
import org.apache.fluss.utils.ArrowUtils;
import org.apache.fluss.utils.PartitionUtils;
import org.apache.fluss.types.DataTypeChecks;
import org.apache.fluss.types.RowType;

public final class FlussLookupOracle {

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("--partition-names")) {
            StringBuilder out = new StringBuilder();
            partitionNames(args[1].split(","), stdinLines(), out);
            System.out.print(out);
            System.out.flush();
            return;
        }
        if (args.length == 1 && args[0].equals("--partition-names-batch")) {
            partitionNamesBatch();
            return;
        }
        if (args.length == 4 && args[0].equals("--key-vectors")) {
            StringBuilder out = new StringBuilder();
            keyVectors(args[1], args[2].split(";"), Integer.parseInt(args[3]), stdinLines(), out);
            System.out.print(out);
            System.out.flush();
            return;
        }
        if (args.length == 1 && args[0].equals("--key-vectors-batch")) {
            keyVectorsBatch();
            return;
        }
        if (args.length == 1 && args[0].equals("--java-version")) {
            System.out.println(Runtime.version().feature());
            return;
        }
        if (args.length == 1 && args[0].equals("--auto-partition")) {
            autoPartition();
            return;
        }
        if (args.length == 2 && args[0].equals("--row-vectors")) {
            StringBuilder out = new StringBuilder();
            rowVectors(splitTopLevel(args[1], ';'), stdinLines(), out);
            System.out.print(out);
            System.out.flush();
            return;
        }
        if (args.length == 1 && args[0].equals("--row-vectors-batch")) {
            rowVectorsBatch();
            return;
        }
        if (args.length != 2 || !args[1].contains(".")) {
            System.err.println("usage: FlussLookupOracle <bootstrap servers> <database.table>  (keys on stdin)");
            System.exit(2);
        }
        String db = args[1].substring(0, args[1].indexOf('.'));
        String tbl = args[1].substring(args[1].indexOf('.') + 1);
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[0]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        List<String> lines = new ArrayList<>();
        for (String l = in.readLine(); l != null; l = in.readLine()) {
            if (!l.isEmpty()) {
                lines.add(l);
            }
        }
        StringBuilder out = new StringBuilder();
        try (Connection conn = ConnectionFactory.createConnection(conf);
                Table table = conn.getTable(TablePath.of(db, tbl))) {
            TableInfo info = table.getTableInfo();
            RowType rowType = info.getRowType();
            List<String> pk = info.getPrimaryKeys();
            if (pk.isEmpty()) {
                throw new IllegalArgumentException(args[1] + " has no primary key");
            }
            int[] pkIndex = new int[pk.size()];
            for (int i = 0; i < pk.size(); i++) {
                pkIndex[i] = rowType.getFieldIndex(pk.get(i));
            }
            Lookuper lookuper = table.newLookup().createLookuper();
            List<CompletableFuture<LookupResult>> pending = new ArrayList<>(lines.size());
            for (String line : lines) {
                String[] parts = line.split("\t", -1);
                if (parts.length != pk.size()) {
                    throw new IllegalArgumentException("key line has " + parts.length + " values, the primary key has " + pk.size() + ": " + line);
                }
                GenericRow key = new GenericRow(pk.size());
                for (int i = 0; i < pk.size(); i++) {
                    key.setField(i, parse(rowType.getTypeAt(pkIndex[i]), parts[i]));
                }
                pending.add(lookuper.lookup(key));
            }
            int found = 0;
            for (CompletableFuture<LookupResult> f : pending) {
                InternalRow row = f.get(60, TimeUnit.SECONDS).getSingletonRow();
                if (row == null) {
                    out.append("MISSING\n");
                    continue;
                }
                found++;
                out.append("FOUND");
                for (int i = 0; i < rowType.getFieldCount(); i++) {
                    out.append('\t').append(format(row, i, rowType.getTypeAt(i)));
                }
                out.append('\n');
            }
            System.out.print(out);
            System.out.flush();
            System.err.println("FlussLookupOracle: " + lines.size() + " lookups in " + args[1] + ", " + found + " found");
        }
        System.exit(0);
    }

    /**
     * Many --partition-names cases in one JVM (see {@link #cases}): header "#case TAB
     * TYPE[,TYPE...] TAB n", then n value lines; stdout: the cases' names in order, n lines each.
     */
    static void partitionNamesBatch() throws Exception {
        cases(3, (h, lines, out) -> partitionNames(h[1].split(","), lines, out));
    }

    /** One case of a batch: its header's fields, its lines, and where its answers go. */
    interface Case {
        void run(String[] header, List<String> lines, StringBuilder out) throws Exception;
    }

    /**
     * The cases of a --*-batch mode, from stdin: each a header line "#case TAB ... TAB n" of
     * {@code fields} TAB-separated fields (the last one n), then its n lines. Each case's answers
     * are appended in order; all of them are printed at the end.
     */
    static void cases(int fields, Case c) throws Exception {
        List<String> lines = stdinLines();
        StringBuilder out = new StringBuilder();
        int i = 0;
        while (i < lines.size()) {
            String[] h = lines.get(i).split("\t", -1);
            if (h.length != fields || !h[0].equals("#case")) {
                throw new IllegalArgumentException("line " + (i + 1) + " is not a #case header of " + fields + " fields: " + lines.get(i));
            }
            int n = Integer.parseInt(h[fields - 1]);
            if (i + 1 + n > lines.size()) {
                throw new IllegalArgumentException("case at line " + (i + 1) + " announces " + n + " lines; stdin ends first");
            }
            c.run(h, lines.subList(i + 1, i + 1 + n), out);
            i += 1 + n;
        }
        System.out.print(out);
        System.out.flush();
    }

    static void partitionNames(String[] typeNames, List<String> lines, StringBuilder out) throws Exception {
        DataType[] types = new DataType[typeNames.length];
        for (int i = 0; i < types.length; i++) {
            types[i] = namedType(typeNames[i]);
        }
        for (String l : lines) {
            String[] parts = l.split("\t", -1);
            if (parts.length != types.length) {
                throw new IllegalArgumentException("line has " + parts.length + " values for " + types.length + " types: " + l);
            }
            List<String> values = new ArrayList<>();
            for (int i = 0; i < types.length; i++) {
                values.add(PartitionUtils.convertValueOfType(parse(types[i], parts[i]), types[i].getTypeRoot()));
            }
            out.append(String.join(ResolvedPartitionSpec.PARTITION_SPEC_SEPARATOR, values)).append('\n');
        }
    }

    static void autoPartition() throws Exception {
        Class<?> utils = Class.forName("org.apache.fluss.utils.PartitionUtils");
        Class<?> strategyClass = Class.forName("org.apache.fluss.utils.AutoPartitionStrategy");
        Class<?> unitClass = Class.forName("org.apache.fluss.config.AutoPartitionTimeUnit");
        Class<?> specClass = Class.forName("org.apache.fluss.metadata.PartitionSpec");
        java.lang.reflect.Method from = strategyClass.getMethod("from", Map.class);
        java.lang.reflect.Method validateFormat = utils.getMethod("validateTimeFormat", unitClass, strategyClass);
        java.lang.reflect.Method generate = utils.getMethod(
                "generateAutoPartitionTime", java.time.ZonedDateTime.class, int.class, unitClass, strategyClass);
        java.lang.reflect.Method validateTime = utils.getMethod("validateAutoPartitionTime", specClass, List.class, strategyClass);
        java.lang.reflect.Method timeZone = strategyClass.getMethod("timeZone");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        for (String l = in.readLine(); l != null; l = in.readLine()) {
            String[] f = l.split("\t", -1);
            Map<String, String> props = new LinkedHashMap<>();
            props.put("table.auto-partition.enabled", "true");
            props.put("table.auto-partition.time-unit", f[0]);
            if (!f[1].equals("\\N")) {
                props.put("table.auto-partition.time-format", f[1]);
            }
            props.put("table.auto-partition.time-zone", f[2]);
            props.put("table.auto-partition.num-retention", f[5]);
            Object strategy = from.invoke(null, props);
            @SuppressWarnings({"unchecked", "rawtypes"})
            Object unit = Enum.valueOf((Class) unitClass, f[0]);
            try {
                validateFormat.invoke(null, unit, strategy);
            } catch (java.lang.reflect.InvocationTargetException e) {
                out.append("BADFORMAT\t").append(message(e.getCause())).append('\n');
                continue;
            }
            java.time.ZoneId zone = ((java.util.TimeZone) timeZone.invoke(strategy)).toZoneId();
            java.time.ZonedDateTime time =
                    java.time.ZonedDateTime.ofInstant(java.time.Instant.ofEpochMilli(Long.parseLong(f[3])), zone);
            out.append(generate.invoke(null, time, Integer.parseInt(f[4]), unit, strategy)).append('\t');
            Map<String, String> spec = new LinkedHashMap<>();
            spec.put("p", f[6]);
            Object partitionSpec = specClass.getConstructor(Map.class).newInstance(spec);
            try {
                validateTime.invoke(null, partitionSpec, java.util.Collections.singletonList("p"), strategy);
                out.append("OK");
            } catch (java.lang.reflect.InvocationTargetException e) {
                String m = message(e.getCause());
                out.append(m.contains("out-of-date") ? "OUTDATED" : m.contains("does not match") ? "FORMAT" : "ERROR");
                out.append('\t').append(m);
            }
            out.append('\n');
        }
        System.out.print(out);
        System.out.flush();
    }

    static DataType namedType(String name) {
        switch (name) {
            case "BOOLEAN": return DataTypes.BOOLEAN();
            case "TINYINT": return DataTypes.TINYINT();
            case "SMALLINT": return DataTypes.SMALLINT();
            case "INT": return DataTypes.INT();
            case "BIGINT": return DataTypes.BIGINT();
            case "FLOAT": return DataTypes.FLOAT();
            case "DOUBLE": return DataTypes.DOUBLE();
            case "STRING": return DataTypes.STRING();
            case "BYTES": return DataTypes.BYTES();
            case "DATE": return DataTypes.DATE();
            case "TIME": return DataTypes.TIME();
            case "TIMESTAMP": return DataTypes.TIMESTAMP(9);
            case "TIMESTAMP_LTZ": return DataTypes.TIMESTAMP_LTZ(9);
            default: throw new IllegalArgumentException("unknown type " + name);
        }
    }

    /** A type as fluss-writer prints it: a scalar name, ARRAY<T>, MAP<K, V> or ROW<name T, ...>, each optionally NOT NULL. */
    static DataType typeOf(String spec) {
        String s = spec.trim();
        if (s.toUpperCase().endsWith(" NOT NULL")) {
            return typeOf(s.substring(0, s.length() - " NOT NULL".length())).copy(false);
        }
        int angle = s.indexOf('<');
        if (angle > 0 && s.endsWith(">")) {
            List<String> args = splitTopLevel(s.substring(angle + 1, s.length() - 1), ',');
            String head = s.substring(0, angle).trim().toUpperCase();
            if (head.equals("ARRAY") && args.size() == 1) {
                return DataTypes.ARRAY(typeOf(args.get(0)));
            }
            if (head.equals("MAP") && args.size() == 2) {
                return DataTypes.MAP(typeOf(args.get(0)), typeOf(args.get(1)));
            }
            if (head.equals("ROW")) {
                DataField[] fields = new DataField[args.size()];
                for (int i = 0; i < fields.length; i++) {
                    String f = args.get(i).trim();
                    int space = f.indexOf(' ');
                    if (space < 0) {
                        throw new IllegalArgumentException("ROW field without a type in " + spec);
                    }
                    fields[i] = DataTypes.FIELD(f.substring(0, space), typeOf(f.substring(space + 1)));
                }
                return DataTypes.ROW(fields);
            }
            throw new IllegalArgumentException("unknown type " + spec);
        }
        String u = s.toUpperCase();
        int open = u.indexOf('(');
        if (open < 0) {
            return namedType(u);
        }
        String[] n = u.substring(open + 1, u.length() - 1).split(",");
        int a = Integer.parseInt(n[0].trim());
        switch (u.substring(0, open).trim()) {
            case "DECIMAL": return DataTypes.DECIMAL(a, n.length > 1 ? Integer.parseInt(n[1].trim()) : 0);
            case "TIME": return DataTypes.TIME(a);
            case "CHAR": return DataTypes.CHAR(a);
            case "BINARY": return DataTypes.BINARY(a);
            case "TIMESTAMP": return DataTypes.TIMESTAMP(a);
            case "TIMESTAMP_LTZ": return DataTypes.TIMESTAMP_LTZ(a);
            default: throw new IllegalArgumentException("unknown type " + spec);
        }
    }

    /** s split at the separators outside <> and () (each part as written, not trimmed). */
    static List<String> splitTopLevel(String s, char separator) {
        List<String> parts = new ArrayList<>();
        int depth = 0, start = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '<' || c == '(') {
                depth++;
            } else if (c == '>' || c == ')') {
                depth--;
            } else if (c == separator && depth == 0) {
                parts.add(s.substring(start, i));
                start = i + 1;
            }
        }
        if (depth != 0) {
            throw new IllegalArgumentException("unbalanced brackets in type " + s);
        }
        parts.add(s.substring(start));
        return parts;
    }

    /**
     * Many --key-vectors cases in one JVM (a JVM per case made the interop step minutes long).
     * stdin: per case a line "#case TAB FORMAT TAB TYPE[;TYPE...] TAB buckets TAB n", then its n
     * key lines; stdout: the cases' answers in order, n lines each, as --key-vectors prints them.
     */
    static void keyVectorsBatch() throws Exception {
        cases(5, (h, lines, out) -> keyVectors(h[1], h[2].split(";"), Integer.parseInt(h[3]), lines, out));
    }

    static void keyVectors(String format, String[] typeSpecs, int buckets, List<String> lines, StringBuilder out) throws Exception {
        DataType[] types = new DataType[typeSpecs.length];
        List<String> names = new ArrayList<>();
        for (int i = 0; i < types.length; i++) {
            types[i] = typeOf(typeSpecs[i]).copy(false);
            names.add("k" + i);
        }
        RowType rowType = RowType.of(types, names.toArray(new String[0]));
        DataLakeFormat lake = format.equals("none") ? null : DataLakeFormat.valueOf(format.toUpperCase());
        BucketingFunction bucketing = BucketingFunction.of(lake);
        KeyEncoder encoder = null;
        String refused = null;
        try {
            encoder = KeyEncoder.ofBucketKeyEncoder(rowType, names, lake);
        } catch (RuntimeException e) {
            refused = String.valueOf(e.getMessage()).replace('\n', ' ');
        }
        for (GenericRow row : parseRows(types, lines)) {
            if (refused != null) {
                out.append("ERROR\t").append(refused).append('\n');
                continue;
            }
            try {
                byte[] key = encoder.encodeKey(row);
                int bucket = bucketing.bucketing(key, buckets);
                out.append(bytesToHex(key)).append('\t').append(bucket).append('\n');
            } catch (RuntimeException e) {
                out.append("ERROR\t").append(String.valueOf(e.getMessage()).replace('\n', ' ')).append('\n');
            }
        }
    }

    /**
     * Many --row-vectors cases in one JVM (a JVM per case, loading Arrow each time, made the
     * nested-values check a minute long). stdin: per case a line "#case TAB TYPE[;TYPE...] TAB n",
     * then its n row lines; stdout: per case what --row-vectors prints, then a line "#end".
     */
    static void rowVectorsBatch() throws Exception {
        cases(3, (h, lines, out) -> {
            rowVectors(splitTopLevel(h[1], ';'), lines, out);
            out.append("#end\n");
        });
    }

    static void rowVectors(List<String> typeSpecs, List<String> lines, StringBuilder out) throws Exception {
        DataType[] types = new DataType[typeSpecs.size()];
        String[] names = new String[types.length];
        for (int i = 0; i < types.length; i++) {
            types[i] = typeOf(typeSpecs.get(i));
            names[i] = "c" + i;
        }
        RowType rowType = RowType.of(types, names);
        List<GenericRow> rows = parseRows(types, lines);
        for (GenericRow row : rows) {
            try {
                CompactedRowEncoder encoder = new CompactedRowEncoder(types);
                encoder.startNewRow();
                for (int i = 0; i < types.length; i++) {
                    encoder.encodeField(i, row.getField(i));
                }
                CompactedRow encoded = encoder.finishRow();
                byte[] bytes = new byte[encoded.getSizeInBytes()];
                encoded.copyTo(bytes, 0);
                out.append("C\t").append(bytesToHex(bytes)).append('\n');
            } catch (RuntimeException e) {
                out.append("C\tERROR\t").append(message(e)).append('\n');
            }
        }
        try (BufferAllocator allocator = new RootAllocator();
                VectorSchemaRoot root = VectorSchemaRoot.create(ArrowUtils.toArrowSchema(rowType), allocator)) {
            ArrowFieldWriter[] writers = new ArrowFieldWriter[types.length];
            for (int i = 0; i < types.length; i++) {
                root.getVector(i).allocateNew();
                writers[i] = ArrowUtils.createArrowFieldWriter(root.getVector(i), types[i]);
            }
            try {
                for (int r = 0; r < rows.size(); r++) {
                    for (int i = 0; i < types.length; i++) {
                        writers[i].write(r, rows.get(r), i, true);
                    }
                }
            } catch (RuntimeException e) {
                out.append("A\tERROR\t").append(message(e)).append('\n');
                return;
            }
            root.setRowCount(rows.size());
            try (ArrowRecordBatch batch = new VectorUnloader(root).getRecordBatch()) {
                for (ArrowFieldNode node : batch.getNodes()) {
                    out.append("N\t").append(node.getLength()).append('\t').append(node.getNullCount()).append('\n');
                }
                for (ArrowBuf buf : batch.getBuffers()) {
                    byte[] bytes = new byte[(int) buf.writerIndex()];
                    buf.getBytes(0, bytes);
                    out.append("B\t").append(bytesToHex(bytes)).append('\n');
                }
            }
        }
    }

    static String message(Throwable e) {
        String m = e.getMessage() != null ? e.getMessage() : e.getClass().getName();
        return m.replace('\n', ' ').replace('\t', ' ');
    }

    /** Rows from stdin: one per line, the values of {@code types} in canonical text, TAB separated. */
    static List<String> stdinLines() throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        List<String> lines = new ArrayList<>();
        for (String l = in.readLine(); l != null; l = in.readLine()) {
            lines.add(l);
        }
        return lines;
    }

    static List<GenericRow> parseRows(DataType[] types, List<String> lines) {
        List<GenericRow> rows = new ArrayList<>();
        for (String l : lines) {
            String[] parts = l.split("\t", -1);
            if (parts.length != types.length) {
                throw new IllegalArgumentException("line has " + parts.length + " values for " + types.length + " types: " + l);
            }
            GenericRow row = new GenericRow(types.length);
            for (int i = 0; i < types.length; i++) {
                row.setField(i, parse(types[i], parts[i]));
            }
            rows.add(row);
        }
        return rows;
    }

    static Object parse(DataType t, String s) {
        if (s.equals("\\N")) {
            return null;
        }
        switch (t.getTypeRoot()) {
            case ARRAY: case MAP: case ROW: {
                NestedReader reader = new NestedReader(s);
                Object value = reader.value(t);
                if (reader.pos != s.length()) {
                    throw new IllegalArgumentException("trailing text at " + reader.pos + " in " + t + " value " + s);
                }
                return value;
            }
            case BOOLEAN: return Boolean.parseBoolean(s);
            case TINYINT: return Byte.parseByte(s);
            case SMALLINT: return Short.parseShort(s);
            case INTEGER: case DATE: case TIME_WITHOUT_TIME_ZONE: return Integer.parseInt(s);
            case BIGINT: return Long.parseLong(s);
            case FLOAT: return Float.intBitsToFloat((int) Long.parseLong(s.substring(2), 16));
            case DOUBLE: return Double.longBitsToDouble(new BigInteger(s.substring(2), 16).longValue());
            case CHAR: case STRING: return BinaryString.fromString(unescape(s));
            case BINARY: case BYTES: return hexToBytes(s.substring(2));
            case DECIMAL: {
                int p = DataTypeChecks.getPrecision(t), sc = DataTypeChecks.getScale(t);
                return Decimal.fromBigDecimal(new BigDecimal(new BigInteger(s), sc), p, sc);
            }
            case TIMESTAMP_WITHOUT_TIME_ZONE: {
                String[] mn = s.split("\\.");
                return TimestampNtz.fromMillis(Long.parseLong(mn[0]), Integer.parseInt(mn[1]));
            }
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE: {
                String[] mn = s.split("\\.");
                return TimestampLtz.fromEpochMillis(Long.parseLong(mn[0]), Integer.parseInt(mn[1]));
            }
            default: throw new IllegalArgumentException("unsupported key type " + t);
        }
    }

    /** Reads a nested value in the canonical form; scalar tokens go to parse (with their escapes). */
    static final class NestedReader {
        static final String DELIMITERS = ",=[]{}()";
        final String s;
        int pos;

        NestedReader(String s) {
            this.s = s;
        }

        Object value(DataType t) {
            switch (t.getTypeRoot()) {
                case ARRAY: case MAP: case ROW:
                    if (s.startsWith("\\N", pos)) {
                        pos += 2;
                        return null;
                    }
                    break;
                default:
                    return parse(t, token());
            }
            if (t instanceof ArrayType) {
                DataType elementType = ((ArrayType) t).getElementType();
                List<Object> elements = new ArrayList<>();
                expect('[');
                if (!next(']')) {
                    do {
                        elements.add(value(elementType));
                    } while (accept(','));
                }
                expect(']');
                return new GenericArray(elements.toArray());
            }
            if (t instanceof MapType) {
                MapType mapType = (MapType) t;
                Map<Object, Object> entries = new LinkedHashMap<>();
                expect('{');
                if (!next('}')) {
                    do {
                        Object key = value(mapType.getKeyType());
                        expect('=');
                        entries.put(key, value(mapType.getValueType()));
                    } while (accept(','));
                }
                expect('}');
                return new GenericMap(entries);
            }
            RowType rowType = (RowType) t;
            GenericRow row = new GenericRow(rowType.getFieldCount());
            expect('(');
            for (int i = 0; i < rowType.getFieldCount(); i++) {
                if (i > 0) {
                    expect(',');
                }
                row.setField(i, value(rowType.getTypeAt(i)));
            }
            expect(')');
            return row;
        }

        /** The raw text up to the next unescaped delimiter (escapes kept, parse removes them). */
        String token() {
            int start = pos;
            while (pos < s.length() && DELIMITERS.indexOf(s.charAt(pos)) < 0) {
                pos += s.charAt(pos) == '\\' && pos + 1 < s.length() ? 2 : 1;
            }
            return s.substring(start, pos);
        }

        boolean next(char c) {
            return pos < s.length() && s.charAt(pos) == c;
        }

        boolean accept(char c) {
            if (next(c)) {
                pos++;
                return true;
            }
            return false;
        }

        void expect(char c) {
            if (!accept(c)) {
                throw new IllegalArgumentException("expected '" + c + "' at " + pos + " in " + s);
            }
        }
    }

    static String format(DataGetters row, int i, DataType t) {
        return format(row, i, t, false);
    }

    /** Field / element i of row in the canonical form; nested = inside an ARRAY, MAP or ROW value. */
    static String format(DataGetters row, int i, DataType t, boolean nested) {
        if (row.isNullAt(i)) {
            return "\\N";
        }
        switch (t.getTypeRoot()) {
            case BOOLEAN: return Boolean.toString(row.getBoolean(i));
            case TINYINT: return Byte.toString(row.getByte(i));
            case SMALLINT: return Short.toString(row.getShort(i));
            case INTEGER: case DATE: case TIME_WITHOUT_TIME_ZONE: return Integer.toString(row.getInt(i));
            case BIGINT: return Long.toString(row.getLong(i));
            case FLOAT: return String.format("f:%08x", Float.floatToRawIntBits(row.getFloat(i)));
            case DOUBLE: return String.format("d:%016x", Double.doubleToRawLongBits(row.getDouble(i)));
            case CHAR: case STRING: {
                String v = row.getString(i).toString();
                return nested ? escapeNested(v) : escape(v);
            }
            case BINARY: case BYTES: return "x:" + bytesToHex(row.getBytes(i));
            case DECIMAL: {
                int p = DataTypeChecks.getPrecision(t), sc = DataTypeChecks.getScale(t);
                return row.getDecimal(i, p, sc).toBigDecimal().unscaledValue().toString();
            }
            case TIMESTAMP_WITHOUT_TIME_ZONE: {
                TimestampNtz ts = row.getTimestampNtz(i, DataTypeChecks.getPrecision(t));
                return ts.getMillisecond() + "." + ts.getNanoOfMillisecond();
            }
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE: {
                TimestampLtz ts = row.getTimestampLtz(i, DataTypeChecks.getPrecision(t));
                return ts.getEpochMillisecond() + "." + ts.getNanoOfMillisecond();
            }
            case ARRAY: {
                DataType elementType = ((ArrayType) t).getElementType();
                InternalArray array = row.getArray(i);
                StringBuilder b = new StringBuilder("[");
                for (int k = 0; k < array.size(); k++) {
                    b.append(k > 0 ? "," : "").append(format(array, k, elementType, true));
                }
                return b.append(']').toString();
            }
            case MAP: {
                MapType mapType = (MapType) t;
                InternalMap map = row.getMap(i);
                InternalArray keys = map.keyArray(), values = map.valueArray();
                StringBuilder b = new StringBuilder("{");
                for (int k = 0; k < map.size(); k++) {
                    b.append(k > 0 ? "," : "").append(format(keys, k, mapType.getKeyType(), true))
                            .append('=').append(format(values, k, mapType.getValueType(), true));
                }
                return b.append('}').toString();
            }
            case ROW: {
                RowType rowType = (RowType) t;
                InternalRow nestedRow = row.getRow(i, rowType.getFieldCount());
                StringBuilder b = new StringBuilder("(");
                for (int k = 0; k < rowType.getFieldCount(); k++) {
                    b.append(k > 0 ? "," : "").append(format(nestedRow, k, rowType.getTypeAt(k), true));
                }
                return b.append(')').toString();
            }
            default: return "?" + t;
        }
    }

    static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n");
    }

    /** escape, plus a backslash before the delimiters of nested values. */
    static String escapeNested(String s) {
        String e = escape(s);
        StringBuilder b = new StringBuilder(e.length());
        for (int i = 0; i < e.length(); i++) {
            char c = e.charAt(i);
            if (NestedReader.DELIMITERS.indexOf(c) >= 0) {
                b.append('\\');
            }
            b.append(c);
        }
        return b.toString();
    }

    static String unescape(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                char n = s.charAt(++i);
                b.append(n == 't' ? '\t' : n == 'n' ? '\n' : n);
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    static String bytesToHex(byte[] b) {
        StringBuilder s = new StringBuilder(b.length * 2);
        for (byte x : b) {
            s.append(String.format("%02x", x & 0xff));
        }
        return s.toString();
    }

    static byte[] hexToBytes(String h) {
        byte[] b = new byte[h.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }
}
