// Kafka Connect's own single message transforms as an oracle (tests/connect_transforms_oracle.py): a long-lived
// process that reads one JSON request a line on stdin and writes one JSON answer a line on stdout.
//
// Request: {"config": {<the connector's transforms / predicates keys, as strings>}, "records": [<record>, ...]}
// where a record is {"topic", "partition", "offset", "timestamp" (null: none), "key", "value", "headers"}; key and
// value are null (no bytes) or {"schemas": <bool>, "data": <the JSON text a topic holds>}, read by JsonConverter
// with that schemas.enable; headers are [[name, <base64 bytes or null>], ...], as read from Kafka (no schema).
// The chain is built as Connect's ConnectorConfig builds it: `transforms` lists aliases, `transforms.<a>.type` the
// class, the alias's other keys (less `predicate` and `negate`) configure it; a step with a predicate applies where
// test(record) != negate.
// Answer: {"results": [<result>, ...]} with one result per record: {"dropped": true}, {"error": "<Class>: <message>"}
// or the record out, {"topic", "partition", "offset", "timestamp", "key", "value", "headers"}, where key, value and
// each header's value are JsonConverter envelopes ({"schema": <schema or null>, "payload": ...}, null for a null
// value without a schema) written with replace.null.with.default=false (so a null stays null); a schemaless
// java.util.Date is written as its epoch milliseconds, as the Confluent S3 sink's JsonFormat (Jackson) writes it.
// A chain that does not configure is {"config_error": "<Class>: <message>"}.
// Run in Java's single-file source mode: java -cp '<libs>/*' ConnectTransformsOracle.java
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.predicates.Predicate;

public class ConnectTransformsOracle {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Map<String, JsonConverter> READERS = new HashMap<>();
    private static final JsonConverter WRITER = converter(true, false, Map.of("replace.null.with.default", "false"));

    private record Step(Transformation<SinkRecord> transform, Predicate<SinkRecord> predicate, boolean negate) {}

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            out.println(JSON.writeValueAsString(answer(JSON.readTree(line))));
            out.flush();
        }
    }

    private static ObjectNode answer(JsonNode request) {
        ObjectNode answer = JSON.createObjectNode();
        Map<String, String> config = new HashMap<>();
        request.get("config").fields().forEachRemaining(e -> config.put(e.getKey(), e.getValue().asText()));
        List<Step> chain;
        try {
            chain = chain(config);
        } catch (Exception e) {
            return answer.put("config_error", describe(e));
        }
        ArrayNode results = answer.putArray("results");
        for (JsonNode record : request.get("records")) {
            results.add(result(chain, record));
        }
        for (Step step : chain) {
            step.transform().close();
        }
        return answer;
    }

    private static List<String> aliases(Map<String, String> config, String key) {
        List<String> aliases = new ArrayList<>();
        for (String alias : config.getOrDefault(key, "").split(",")) {
            if (!alias.isBlank()) {
                aliases.add(alias.trim());
            }
        }
        return aliases;
    }

    private static Map<String, Object> options(Map<String, String> config, String prefix) {
        Map<String, Object> options = new LinkedHashMap<>();
        config.forEach((k, v) -> {
            if (k.startsWith(prefix)) {
                options.put(k.substring(prefix.length()), v);
            }
        });
        return options;
    }

    @SuppressWarnings("unchecked")
    private static List<Step> chain(Map<String, String> config) throws Exception {
        Map<String, Predicate<SinkRecord>> predicates = new HashMap<>();
        for (String alias : aliases(config, "predicates")) {
            Map<String, Object> options = options(config, "predicates." + alias + ".");
            Predicate<SinkRecord> predicate = (Predicate<SinkRecord>) instance((String) options.get("type"));
            predicate.configure(options);
            predicates.put(alias, predicate);
        }
        List<Step> steps = new ArrayList<>();
        for (String alias : aliases(config, "transforms")) {
            Map<String, Object> options = options(config, "transforms." + alias + ".");
            Object predicate = options.remove("predicate");
            Object negate = options.remove("negate");
            Transformation<SinkRecord> transform = (Transformation<SinkRecord>) instance((String) options.get("type"));
            transform.configure(options);
            steps.add(new Step(transform, predicate == null ? null : predicates.get(((String) predicate).trim()),
                negate != null && Boolean.parseBoolean(((String) negate).trim())));
        }
        return steps;
    }

    private static Object instance(String type) throws Exception {
        return Class.forName(type.trim()).getDeclaredConstructor().newInstance();
    }

    private static JsonNode result(List<Step> chain, JsonNode input) {
        try {
            SinkRecord record = record(input);
            for (Step step : chain) {
                if (step.predicate() == null || step.predicate().test(record) != step.negate()) {
                    record = step.transform().apply(record);
                    if (record == null) {
                        return JSON.createObjectNode().put("dropped", true);
                    }
                }
            }
            return written(record);
        } catch (Exception e) {
            return JSON.createObjectNode().put("error", describe(e));
        }
    }

    private static SinkRecord record(JsonNode input) {
        String topic = input.get("topic").asText();
        SchemaAndValue key = read(topic, input.get("key"), true);
        SchemaAndValue value = read(topic, input.get("value"), false);
        ConnectHeaders headers = new ConnectHeaders();
        for (JsonNode header : input.get("headers")) {
            JsonNode data = header.get(1);
            headers.add(header.get(0).asText(), data.isNull() ? null : Base64.getDecoder().decode(data.asText()), null);
        }
        JsonNode timestamp = input.get("timestamp");
        return new SinkRecord(topic, input.get("partition").asInt(), key.schema(), key.value(), value.schema(),
            value.value(), input.get("offset").asLong(), timestamp.isNull() ? null : timestamp.asLong(),
            timestamp.isNull() ? TimestampType.NO_TIMESTAMP_TYPE : TimestampType.CREATE_TIME, headers);
    }

    private static SchemaAndValue read(String topic, JsonNode part, boolean isKey) {
        if (part.isNull()) {
            return SchemaAndValue.NULL;
        }
        boolean schemas = part.get("schemas").asBoolean();
        JsonConverter reader = READERS.computeIfAbsent(isKey + "/" + schemas, k -> converter(schemas, isKey, Map.of()));
        return reader.toConnectData(topic, part.get("data").asText().getBytes(StandardCharsets.UTF_8));
    }

    private static ObjectNode written(SinkRecord record) throws Exception {
        ObjectNode out = JSON.createObjectNode();
        out.put("topic", record.topic()).put("partition", record.kafkaPartition()).put("offset", record.kafkaOffset());
        out.set("timestamp", record.timestamp() == null ? NullNode.getInstance() : JSON.valueToTree(record.timestamp()));
        out.set("key", envelope(record.topic(), record.keySchema(), record.key()));
        out.set("value", envelope(record.topic(), record.valueSchema(), record.value()));
        ArrayNode headers = out.putArray("headers");
        for (Header header : record.headers()) {
            headers.addArray().add(header.key()).add(envelope(record.topic(), header.schema(), header.value()));
        }
        return out;
    }

    private static JsonNode envelope(String topic, Schema schema, Object value) throws Exception {
        if (schema == null && value == null) {
            return NullNode.getInstance();
        }
        byte[] bytes = WRITER.fromConnectData(topic, schema, schema == null ? plain(value) : value);
        return JSON.readTree(bytes);
    }

    /** A schemaless value with each java.util.Date as its epoch milliseconds (JsonConverter has no type for it). */
    private static Object plain(Object value) {
        if (value instanceof java.util.Date date) {
            return date.getTime();
        }
        if (value instanceof Map<?, ?> map) {
            Map<Object, Object> copy = new LinkedHashMap<>();
            map.forEach((k, v) -> copy.put(plain(k), plain(v)));
            return copy;
        }
        if (value instanceof List<?> list) {
            List<Object> copy = new ArrayList<>();
            list.forEach(item -> copy.add(plain(item)));
            return copy;
        }
        return value;
    }

    private static JsonConverter converter(boolean schemas, boolean isKey, Map<String, String> more) {
        Map<String, String> config = new HashMap<>(more);
        config.put("schemas.enable", String.valueOf(schemas));
        JsonConverter converter = new JsonConverter();
        converter.configure(config, isKey);
        return converter;
    }

    private static String describe(Throwable e) {
        return e.getClass().getSimpleName() + ": " + e.getMessage();
    }
}
