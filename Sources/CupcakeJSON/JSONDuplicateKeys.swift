/// Finds a key that appears twice in one JSON object, at any depth.
///
/// JSON leaves duplicate keys undefined, and parsers disagree: Foundation's keeps the first
/// value, most others the last. An order whose `name` means one thing to us and another to a
/// proxy or a log pipeline in front of us is refused instead (400). This only walks the
/// structure (strings, and the nesting of objects and arrays) of text that a JSON parser has
/// accepted or will judge; each key's literal is decoded by ``JSONValue/parse(_:)``, so escapes
/// (`"na\u006de"` is `"name"`) compare by meaning.
public enum JSONDuplicateKeys {
    /// The first key found twice in the same object, or nil.
    public static func first(in bytes: some Collection<UInt8>) -> String? {
        let text = Array(bytes)
        // For each open object or array: whether it is an object, and the object's keys so far.
        var isObject: [Bool] = []
        var keys: [Set<String>] = []
        var index = 0
        var expectingKey = false
        while index < text.count {
            switch text[index] {
            case UInt8(ascii: "{"):
                isObject.append(true)
                keys.append([])
                expectingKey = true
            case UInt8(ascii: "["):
                isObject.append(false)
                keys.append([])
                expectingKey = false
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if !isObject.isEmpty {
                    isObject.removeLast()
                    keys.removeLast()
                }
                expectingKey = false
            case UInt8(ascii: ","):
                expectingKey = isObject.last ?? false
            case UInt8(ascii: "\""):
                let start = index
                index += 1
                while index < text.count, text[index] != UInt8(ascii: "\"") {
                    index += text[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                guard index < text.count else { return nil }  // unterminated: the parser says so
                if expectingKey, isObject.last == true {
                    guard let key = (try? JSONValue.parse(text[start...index]))?.string else { return nil }
                    if !keys[keys.count - 1].insert(key).inserted { return key }
                    expectingKey = false
                }
            default:
                break
            }
            index += 1
        }
        return nil
    }
}
