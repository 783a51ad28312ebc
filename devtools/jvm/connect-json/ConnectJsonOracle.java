// Kafka's own JsonConverter as an oracle (tests/connect_json_oracle.py): one line per case, a Connect value of each
// type as JsonConverter.fromConnectData writes it with schemas.enable=true (the envelope a topic holds) and with
// schemas.enable=false (the JSON the Confluent S3 sink's JsonFormat writes for it), tab-separated after the case's
// name. Run in Java's single-file source mode: java -cp '<connect-json libs>/*' ConnectJsonOracle.java
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.connect.data.Date;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Time;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.json.JsonConverter;

public class ConnectJsonOracle {
    private static final List<Object[]> CASES = new ArrayList<>();

    private static void add(String name, Schema schema, Object value) {
        CASES.add(new Object[] {name, schema, value});
    }

    /** A struct of one field `f` of `schema` holding `value`. */
    private static void field(String name, Schema schema, Object value) {
        Schema struct = SchemaBuilder.struct().name("oracle." + name).field("f", schema).build();
        add(name, struct, new Struct(struct).put("f", value));
    }

    private static JsonConverter converter(boolean schemas) {
        JsonConverter converter = new JsonConverter();
        converter.configure(Map.of("schemas.enable", String.valueOf(schemas)), false);
        return converter;
    }

    public static void main(String[] args) {
        field("boolean", Schema.BOOLEAN_SCHEMA, true);
        field("int8", Schema.INT8_SCHEMA, (byte) -128);
        field("int16", Schema.INT16_SCHEMA, (short) 32767);
        field("int32", Schema.INT32_SCHEMA, -2147483648);
        field("int64", Schema.INT64_SCHEMA, 9223372036854775807L);
        field("float32", Schema.FLOAT32_SCHEMA, 12.2f);
        field("float64", Schema.FLOAT64_SCHEMA, 0.1);
        field("bytes", Schema.BYTES_SCHEMA, new byte[] {0, 1, -1});
        field("string", Schema.STRING_SCHEMA, "é\"\n");
        field("optional_null", Schema.OPTIONAL_STRING_SCHEMA, null);
        field("default", SchemaBuilder.int32().optional().defaultValue(7).build(), null);
        field("array", SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).build(), Arrays.asList("a", null, "b"));
        Map<String, Integer> byName = new LinkedHashMap<>();
        byName.put("one", 1);
        byName.put("two", 2);
        field("map_string_keys", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(), byName);
        Map<Integer, String> byNumber = new LinkedHashMap<>();
        byNumber.put(1, "one");
        field("map_int_keys", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build(), byNumber);
        Schema inner = SchemaBuilder.struct().name("oracle.Inner").optional().field("x", Schema.INT64_SCHEMA).build();
        field("struct", inner, new Struct(inner).put("x", 5L));
        field("struct_null", inner, null);
        field("decimal", Decimal.schema(2), new BigDecimal("-123.45"));
        field("decimal_zero_scale", Decimal.schema(0), new BigDecimal("98765432109876543210"));
        field("date", Date.SCHEMA, Date.toLogical(Date.SCHEMA, 19000));
        field("time", Time.SCHEMA, Time.toLogical(Time.SCHEMA, 3723004));
        field("timestamp", Timestamp.SCHEMA, Timestamp.toLogical(Timestamp.SCHEMA, 1700000000123L));
        add("top_int32", Schema.INT32_SCHEMA, 12);
        add("top_float64", Schema.FLOAT64_SCHEMA, 2.5);
        add("top_array", SchemaBuilder.array(Schema.INT64_SCHEMA).build(), Arrays.asList(1L, 2L));
        add("top_optional_null", Schema.OPTIONAL_STRING_SCHEMA, null);

        JsonConverter enveloped = converter(true);
        JsonConverter plain = converter(false);
        StringBuilder out = new StringBuilder();
        for (Object[] c : CASES) {
            Schema schema = (Schema) c[1];
            out.append(c[0]).append('\t')
                .append(new String(enveloped.fromConnectData("t", schema, c[2]), StandardCharsets.UTF_8)).append('\t')
                .append(new String(plain.fromConnectData("t", schema, c[2]), StandardCharsets.UTF_8)).append('\n');
        }
        System.out.print(out);
    }
}
