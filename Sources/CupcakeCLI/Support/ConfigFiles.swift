import Foundation

/// Where cupcake's per-user files live, following the XDG base directory spec.
package enum ConfigFiles {
    /// `$XDG_CONFIG_HOME/cupcake` (default `~/.config/cupcake`).
    package static func directory(environment: [String: String]) -> URL {
        if let config = environment["XDG_CONFIG_HOME"], !config.isEmpty {
            return URL(fileURLWithPath: config).appendingPathComponent("cupcake")
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".config/cupcake")
    }

    /// `$XDG_DATA_HOME/cupcake` (default `~/.local/share/cupcake`): receipts.
    package static func dataDirectory(environment: [String: String]) -> URL {
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty {
            return URL(fileURLWithPath: data).appendingPathComponent("cupcake")
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".local/share/cupcake")
    }

    /// A file in that directory, if it exists.
    package static func userFile(named name: String, environment: [String: String]) -> URL? {
        let url = directory(environment: environment).appendingPathComponent(name)
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }
}
