/// PostgreSQL array literals (`{1,2,3}`, `{"a","b"}`), for passing a whole batch as one parameter
/// per column to `unnest(...)`: one statement inserts any number of orders. Every element of a
/// text array is quoted, with `"` and `\` escaped, so no value can end an element early.
enum PostgresArray {
    static func integers(_ values: [Int64]) -> String {
        "{" + values.map(String.init).joined(separator: ",") + "}"
    }

    static func booleans(_ values: [Bool]) -> String {
        "{" + values.map { $0 ? "t" : "f" }.joined(separator: ",") + "}"
    }

    static func texts(_ values: [String]) -> String {
        "{" + values.map(quoted).joined(separator: ",") + "}"
    }

    /// Byte strings (NULL where nil) in bytea's hex form.
    static func bytes(_ values: [[UInt8]?]) -> String {
        let hex = Array("0123456789abcdef".utf8)
        return "{"
            + values.map { value in
                guard let value else { return "NULL" }
                var text: [UInt8] = Array("\"\\\\x".utf8)
                text.reserveCapacity(value.count * 2 + 5)
                for byte in value {
                    text.append(hex[Int(byte >> 4)])
                    text.append(hex[Int(byte & 15)])
                }
                text.append(UInt8(ascii: "\""))
                return String(decoding: text, as: UTF8.self)
            }.joined(separator: ",") + "}"
    }

    private static func quoted(_ text: String) -> String {
        var out = "\""
        for character in text.unicodeScalars {
            if character == "\"" || character == "\\" { out.unicodeScalars.append("\\") }
            out.unicodeScalars.append(character)
        }
        return out + "\""
    }
}
