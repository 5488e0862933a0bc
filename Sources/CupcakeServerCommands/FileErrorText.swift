import Foundation

/// A short reason for a file error ("no such file", "permission denied"), without Foundation's
/// dump, for messages that name the file themselves.
enum FileErrorText {
    /// The reason `error` (from reading or writing a file) happened.
    static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let posix = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, posix.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(posix.code)))
        }
        switch nsError.code {
        case NSFileReadNoSuchFileError, NSFileNoSuchFileError: return "no such file"
        case NSFileReadNoPermissionError, NSFileWriteNoPermissionError: return "permission denied"
        case NSFileWriteUnknownError: return "it could not be written"
        case NSFileReadUnknownError: return "it could not be read"
        default:
            // Foundation's text without its "(NSCocoaErrorDomain error N.)" tail.
            let text = nsError.localizedDescription
            return String(text[..<(text.range(of: " (NSCocoaErrorDomain")?.lowerBound ?? text.endIndex)])
        }
    }
}
