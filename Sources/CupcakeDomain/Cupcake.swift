/// Facts about this build of cupcake.
public enum Cupcake {
    /// The version, printed by `cupcake --version` and sent as `User-Agent: cupcake/VERSION`.
    public static let version = "0.6.0"
}
