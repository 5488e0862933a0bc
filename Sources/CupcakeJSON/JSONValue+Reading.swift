import CJansson

extension JSONValue {
    /// Reads one JSON value (an object, an array or a scalar) from UTF-8 text.
    ///
    /// Strict RFC 8259 JSON, as jansson reads it: no trailing commas, no comments, valid UTF-8;
    /// `\u0000` in a string value is kept. Within jansson's limits (see
    /// ``JSONSyntaxError/isBeyondLimits``).
    ///
    /// - Throws: ``JSONSyntaxError`` with jansson's reason and position.
    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONSyntaxError) -> JSONValue {
        // Read in place when the bytes are contiguous (Data, arrays and their slices).
        let result = bytes.withContiguousStorageIfAvailable(load) ?? Array(bytes).withUnsafeBufferPointer(load)
        return try result.get()
    }

    private static func load(_ text: UnsafeBufferPointer<UInt8>) -> Result<JSONValue, JSONSyntaxError> {
        var error = json_error_t()
        let root = text.withMemoryRebound(to: CChar.self) {
            json_loadb($0.baseAddress, $0.count, Int(JSON_DECODE_ANY | JSON_ALLOW_NUL), &error)
        }
        guard let root else {
            let reason = withUnsafeBytes(of: error.text) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            let code = json_error_code(&error)
            return .failure(
                JSONSyntaxError(
                    line: max(Int(error.line), 1), column: max(Int(error.column), 1), reason: reason,
                    isBeyondLimits: code == json_error_null_byte_in_key || code == json_error_numeric_overflow
                        || code == json_error_stack_overflow))
        }
        defer { cupcake_json_release(root) }
        return .success(JSONValue(root))
    }

    /// Copies jansson's value. Recursion is bounded by jansson's own nesting limit (2,048).
    private init(_ value: UnsafeMutablePointer<json_t>) {
        switch cupcake_json_type(value) {
        case JSON_OBJECT:
            var members: [Member] = []
            members.reserveCapacity(json_object_size(value))
            var iterator = json_object_iter(value)
            while let current = iterator {
                if let key = json_object_iter_key(current), let member = json_object_iter_value(current) {
                    let length = json_object_iter_key_len(current)
                    let name = key.withMemoryRebound(to: UInt8.self, capacity: length) {
                        String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
                    }
                    members.append(Member(key: name, value: JSONValue(member)))
                }
                iterator = json_object_iter_next(value, current)
            }
            self = .object(members)
        case JSON_ARRAY:
            let count = json_array_size(value)
            var elements: [JSONValue] = []
            elements.reserveCapacity(count)
            for index in 0..<count {
                if let element = json_array_get(value, index) { elements.append(JSONValue(element)) }
            }
            self = .array(elements)
        case JSON_STRING:
            let length = json_string_length(value)
            guard let start = json_string_value(value) else {
                self = .string("")
                return
            }
            self = .string(
                start.withMemoryRebound(to: UInt8.self, capacity: length) {
                    String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
                })
        case JSON_INTEGER: self = .integer(Int64(json_integer_value(value)))
        case JSON_REAL: self = .number(json_real_value(value))
        case JSON_TRUE: self = .bool(true)
        case JSON_FALSE: self = .bool(false)
        default: self = .null
        }
    }
}
