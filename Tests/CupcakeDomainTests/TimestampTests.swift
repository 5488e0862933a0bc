import CupcakeDomain
import CupcakeJSON
import Testing

/// Timestamps as reqres writes them, against values computed with Python's datetime.
@Suite struct TimestampTests {
    static let known: [(Int64, String)] = [
        (0, "1970-01-01T00:00:00.000Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (951_782_400_000, "2000-02-29T00:00:00.000Z"),
        (1_709_164_800_999, "2024-02-29T00:00:00.999Z"),
        (1_764_669_600_123, "2025-12-02T10:00:00.123Z"),
        (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
    ]

    @Test(arguments: known)
    func formatsAndParsesBack(milliseconds: Int64, text: String) {
        #expect(Timestamp.iso8601(milliseconds: milliseconds) == text)
        #expect(Timestamp.milliseconds(iso8601: text) == milliseconds)
        var bytes: [UInt8] = Array("at ".utf8)
        Timestamp.appendISO8601(milliseconds: milliseconds, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "at " + text)
    }

    @Test func theJSONWriterWritesATimestampAsAString() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("id")
        writer.string("7")
        writer.key("createdAt")
        writer.timestamp(milliseconds: 1_764_669_600_123)
        writer.key("n")
        writer.integer(1)
        writer.endObject()
        #expect(
            String(decoding: writer.bytes, as: UTF8.self) == #"{"id":"7","createdAt":"2025-12-02T10:00:00.123Z","n":1}"#
        )
    }
}
