/// How hard a commit tries to reach the disk.
public enum Durability: String, Sendable, CaseIterable {
    /// WAL with `synchronous=FULL` (the default): every commit's WAL frames are fsynced before it
    /// returns, so an acknowledged order survives a power loss or an OS crash. Group commit
    /// shares one fsync among the orders of a batch.
    case full
    /// WAL with `synchronous=NORMAL`: a commit survives the process being killed (kill -9), but
    /// the WAL is fsynced only at checkpoints, so a power loss or an OS crash can lose orders
    /// already answered 201. An explicit choice, named with its risk wherever it is shown.
    case process

    /// What it promises, for the startup line.
    public var summary: String {
        switch self {
        case .full: "durability full (each commit fsynced before it is answered)"
        case .process:
            "durability process (survives kill -9; a power loss or OS crash can lose orders already answered)"
        }
    }
}
