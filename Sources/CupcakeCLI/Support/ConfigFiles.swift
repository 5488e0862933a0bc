import CupcakeCheckout
import Foundation

/// Where cupcake's per-user files live, following the XDG base directory spec. Paths are plain
/// strings (see ``PrivateFiles``).
package enum ConfigFiles {
    /// `$XDG_CONFIG_HOME/cupcake` (default `~/.config/cupcake`).
    package static func directory(environment: Environment) -> String {
        if let config = environment.nonEmpty("XDG_CONFIG_HOME") { return PrivateFiles.join(config, "cupcake") }
        return PrivateFiles.join(environment.nonEmpty("HOME") ?? NSHomeDirectory(), ".config/cupcake")
    }

    /// `$XDG_DATA_HOME/cupcake` (default `~/.local/share/cupcake`): receipts.
    package static func dataDirectory(environment: Environment) -> String {
        if let data = environment.nonEmpty("XDG_DATA_HOME") { return PrivateFiles.join(data, "cupcake") }
        return PrivateFiles.join(environment.nonEmpty("HOME") ?? NSHomeDirectory(), ".local/share/cupcake")
    }

    /// A file in that directory, if it exists.
    package static func userFile(named name: String, environment: Environment) -> String? {
        let path = PrivateFiles.join(directory(environment: environment), name)
        return PrivateFiles.exists(path) ? path : nil
    }
}
