/// A one-line status on standard error, redrawn in place; silent unless stderr is a terminal.
struct ProgressLine: Sendable {
    let enabled: Bool
    let console: Console

    /// Replaces the line with `text`.
    func show(_ text: String) {
        guard enabled else { return }
        console.err("\r\u{1B}[2K" + text)
    }

    /// Replaces the line with `text` and ends it.
    func finish(_ text: String) {
        guard enabled else { return }
        console.err("\r\u{1B}[2K" + text + "\n")
    }
}
