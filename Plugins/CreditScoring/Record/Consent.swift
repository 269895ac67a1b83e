import Foundation
import SanadCore

/// The person's consent to analyse their messages on this device, asked before the first analysis (on a terminal,
/// or given with `--consent` when piped, or `consent: true` to the `credit_analyze` tool), kept in the store
/// (`consent.json`, owner-only) and recorded in every record it covers (`consent {givenAt, how}`). `privacy --erase`
/// removes it, so the next analysis asks again.
public struct Consent: Sendable, Equatable {
    /// When it was given, `YYYY-MM-DDTHH:MM:SSZ`.
    public var givenAt: String
    /// How: `terminal` (asked and answered yes), `flag` (`--consent`), `tool` (the tool's `consent` argument) or
    /// `web` (the web app's credit page asked it).
    public var how: String

    public init(givenAt: Date, how: String) {
        self.givenAt = CivilTime.isoString(Int64(givenAt.timeIntervalSince1970.rounded(.down)))
        self.how = how
    }

    /// What the record carries.
    public var json: JSONValue { .object(["givenAt": .string(givenAt), "how": .string(how)]) }

    /// The question asked on a terminal (answered `y` or `yes`).
    public static let question = """
        Sanad will read these messages on this device only to compute a signed credit record (traits, a
        trustworthiness score, explanations citing message ids); no message text is stored or sent.
        Do you consent to this analysis? [y/N] 
        """

    /// Whether `answer` is a yes.
    public static func isYes(_ answer: String?) -> Bool {
        ["y", "yes"].contains(answer?.trimmingCharacters(in: .whitespaces).lowercased() ?? "")
    }

    /// The consent kept in `store`, if any (an unreadable file counts as none: the person is asked again).
    public static func load(_ store: RecordStore) -> Consent? {
        guard let data = FileManager.default.contents(atPath: store.consent.path),
            let value = try? JSONValue.parse(data), let givenAt = value["givenAt"]?.stringValue,
            let how = value["how"]?.stringValue
        else { return nil }
        var consent = Consent(givenAt: Date(), how: how)
        consent.givenAt = givenAt
        return consent
    }

    /// Keeps `self` in `store` (mode 0600).
    public func save(in store: RecordStore) throws {
        do {
            try FileManager.default.createDirectory(
                at: store.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try Data((json.jsonString + "\n").utf8).write(to: store.consent, options: .atomic)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: store.consent.path)
        } catch {
            throw CreditError.io("cannot write \(store.consent.path): \(error.localizedDescription)")
        }
    }
}
