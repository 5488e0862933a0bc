import CupcakeCheckout
import Foundation

/// Where cupcake's per-user files live, following the XDG base directory spec.
package enum ConfigFiles {
    /// `$XDG_CONFIG_HOME/cupcake` (default `~/.config/cupcake`). (Every path here is appended with
    /// `isDirectory` given, so Foundation does not stat(2) the file system to find out.)
    package static func directory(environment: Environment) -> URL {
        if let config = environment.nonEmpty("XDG_CONFIG_HOME") {
            return URL(fileURLWithPath: config, isDirectory: true).appendingPathComponent("cupcake", isDirectory: true)
        }
        let home = environment.nonEmpty("HOME") ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(
            ".config/cupcake", isDirectory: true)
    }

    /// `$XDG_DATA_HOME/cupcake` (default `~/.local/share/cupcake`): receipts.
    package static func dataDirectory(environment: Environment) -> URL {
        if let data = environment.nonEmpty("XDG_DATA_HOME") {
            return URL(fileURLWithPath: data, isDirectory: true).appendingPathComponent("cupcake", isDirectory: true)
        }
        let home = environment.nonEmpty("HOME") ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(
            ".local/share/cupcake", isDirectory: true)
    }

    /// A file in that directory, if it exists.
    package static func userFile(named name: String, environment: Environment) -> URL? {
        let url = directory(environment: environment).appendingPathComponent(name, isDirectory: false)
        return PrivateFiles.exists(url) ? url : nil
    }
}
