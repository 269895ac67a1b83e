/// One verb of a command made of verbs (`sanad credit analyze`, `sanad credit verify`): a type of its own with its
/// own options, parsed and checked in `init` before anything runs, then run.
public protocol CommandVerb {
    /// The word after the command (`analyze`).
    static var name: String { get }
    /// Parses and checks everything after the verb (throws `UsageError`); nothing may be left over.
    init(parsing arguments: inout Arguments) throws
    /// Does the work; returns the exit code.
    func run() async throws -> Int32
}

/// A command whose first argument names one of its `verbs`; an option before the verb, a missing or an unknown verb
/// is a usage error naming the verbs.
public protocol VerbCommand: SanadCommand {
    static var verbs: [any CommandVerb.Type] { get }
}

extension VerbCommand {
    public static func run(_ arguments: inout Arguments) async throws -> Int32 {
        let names = verbs.map { $0.name }.joined(separator: ", ")
        guard let word = arguments.items.first else { throw UsageError("missing a subcommand (\(names))") }
        guard !word.hasPrefix("-") else {
            throw UsageError("the subcommand comes first: 'sanad \(arguments.command) SUBCOMMAND [options]' (\(names))")
        }
        guard let verb = verbs.first(where: { $0.name == word }) else {
            throw UsageError("unknown subcommand '\(word)' (\(names))")
        }
        var rest = Arguments(Array(arguments.items.dropFirst()), command: "\(arguments.command) \(word)")
        let parsed = try verb.init(parsing: &rest)
        return try await parsed.run()
    }
}
