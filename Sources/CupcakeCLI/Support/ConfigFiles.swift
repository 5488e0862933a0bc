import CupcakeCheckout
import Glibc

/// Where cupcake's per-user files live, following the XDG base directory spec. Paths are plain
/// strings (see ``PrivateFiles``).
package enum ConfigFiles {
    /// `$XDG_CONFIG_HOME/cupcake` (default `~/.config/cupcake`).
    package static func directory(environment: Environment) -> String {
        if let config = environment.nonEmpty("XDG_CONFIG_HOME") { return PrivateFiles.join(config, "cupcake") }
        return PrivateFiles.join(environment.nonEmpty("HOME") ?? homeDirectory(), ".config/cupcake")
    }

    /// `$XDG_DATA_HOME/cupcake` (default `~/.local/share/cupcake`): receipts.
    package static func dataDirectory(environment: Environment) -> String {
        if let data = environment.nonEmpty("XDG_DATA_HOME") { return PrivateFiles.join(data, "cupcake") }
        return PrivateFiles.join(environment.nonEmpty("HOME") ?? homeDirectory(), ".local/share/cupcake")
    }

    /// The user's home directory from the password database, when `HOME` is not set.
    private static func homeDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        return buffer.withUnsafeMutableBufferPointer { storage in
            // The entry's strings point into `storage`: read them before it goes.
            var entry = passwd()
            var found: UnsafeMutablePointer<passwd>?
            guard let base = storage.baseAddress else { return "/" }
            let status = getpwuid_r(getuid(), &entry, base, storage.count, &found)
            guard status == 0, found != nil, let home = entry.pw_dir else { return "/" }
            return String(cString: home)
        }
    }

    /// A file in that directory, if it exists.
    package static func userFile(named name: String, environment: Environment) -> String? {
        let path = PrivateFiles.join(directory(environment: environment), name)
        return PrivateFiles.exists(path) ? path : nil
    }
}
