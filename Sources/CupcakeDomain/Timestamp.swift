import CupcakeJSON

/// UTC timestamps as reqres writes them, `2026-12-02T10:00:00.123Z`, formatted and parsed by
/// hand: no formatter objects, no locale, no allocation beyond the string itself.
public enum Timestamp {
    /// Formats milliseconds since 1970 UTC with exactly three fractional digits.
    public static func iso8601(milliseconds: Int64) -> String {
        var bytes = [UInt8]()
        bytes.reserveCapacity(24)
        appendISO8601(milliseconds: milliseconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the ``iso8601(milliseconds:)`` text, as UTF-8, to `bytes`.
    public static func appendISO8601(milliseconds: Int64, to bytes: inout [UInt8]) {
        var ms = milliseconds
        var days = ms / 86_400_000
        ms %= 86_400_000
        if ms < 0 {
            ms += 86_400_000
            days -= 1
        }
        let (year, month, day) = civil(fromDays: days)
        let hour = ms / 3_600_000
        let minute = ms / 60_000 % 60
        let second = ms / 1000 % 60
        let millis = ms % 1000
        func digits(_ value: Int64, _ count: Int) {
            var divisor: Int64 = 1
            for _ in 1..<count { divisor *= 10 }
            var value = value
            while divisor > 0 {
                bytes.append(UInt8(truncatingIfNeeded: value / divisor % 10) + 48)
                value %= divisor
                divisor /= 10
            }
        }
        digits(year, 4)
        bytes.append(45)  // -
        digits(month, 2)
        bytes.append(45)
        digits(day, 2)
        bytes.append(84)  // T
        digits(hour, 2)
        bytes.append(58)  // :
        digits(minute, 2)
        bytes.append(58)
        digits(second, 2)
        bytes.append(46)  // .
        digits(millis, 3)
        bytes.append(90)  // Z
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` into milliseconds since 1970 UTC.
    ///
    /// - Returns: `nil` when the text is not such a timestamp.
    public static func milliseconds(iso8601 text: String) -> Int64? {
        let b = Array(text.utf8)
        func number(_ start: Int, _ count: Int) -> Int64? {
            guard start + count <= b.count else { return nil }
            var value: Int64 = 0
            for byte in b[start..<start + count] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            return value
        }
        guard b.count >= 20, b[4] == 45, b[7] == 45, b[10] == 84 || b[10] == 116, b[13] == 58, b[16] == 58,
            let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var millis: Int64 = 0
        if b[index] == 46 {
            index += 1
            var scale: Int64 = 100
            let start = index
            while index < b.count, (48...57).contains(b[index]) {
                millis += Int64(b[index] - 48) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        guard index < b.count else { return nil }
        var offset: Int64 = 0
        switch b[index] {
        case 90, 122:  // Z
            guard index + 1 == b.count else { return nil }
        case 43, 45:  // + -
            guard index + 6 == b.count, b[index + 3] == 58, let h = number(index + 1, 2), let m = number(index + 4, 2)
            else { return nil }
            offset = (h * 60 + m) * 60_000 * (b[index] == 45 ? -1 : 1)
        default:
            return nil
        }
        let days = self.days(fromCivil: year, month, day)
        return days * 86_400_000 + hour * 3_600_000 + minute * 60_000 + second * 1000 + millis - offset
    }

    // Howard Hinnant's civil-from-days and days-from-civil algorithms.
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

extension JSONWriter {
    /// Writes a UTC timestamp as a string, as ``Timestamp/iso8601(milliseconds:)`` formats it,
    /// without making the string first.
    public mutating func timestamp(milliseconds: Int64) {
        value { bytes in
            bytes.append(UInt8(ascii: "\""))
            Timestamp.appendISO8601(milliseconds: milliseconds, to: &bytes)
            bytes.append(UInt8(ascii: "\""))
        }
    }
}
