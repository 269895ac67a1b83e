import AbsherData
import SanadChat
import SanadCore

/// A dependent (التابع) with a service due: a child's first licence, a spouse's passport, …
public struct Dependent: Sendable, Equatable {
    static let keys = ["id", "name", "relationship", "gender", "service", "dueDate", "documents", "en"]
    /// The keys of `en`: the same texts in English.
    static let englishKeys = ["name", "relationship", "service"]

    public var id: String
    public var name: String
    /// As addressed to the user (`ولدك`, `بنتك`, `زوجتك`).
    public var relationship: String
    /// `gender: "female"` makes the message say `لها` instead of `له`.
    public var isFemale: Bool
    /// The service due, as a phrase (`اصدار رخصة`).
    public var service: String
    public var dueDate: CivilDate
    /// The name, relationship and service in English (the `en` object: `{"name": "Hussam", "relationship": "your
    /// son", "service": "driving licence issue"}`); a text it leaves out is shown as written above.
    public var english: [String: String]

    public init(
        id: String, name: String, relationship: String, isFemale: Bool = false, service: String, dueDate: CivilDate,
        english: [String: String] = [:]
    ) {
        self.id = id
        self.name = name
        self.relationship = relationship
        self.isFemale = isFemale
        self.service = service
        self.dueDate = dueDate
        self.english = english
    }

    public func name(in language: ChatLanguage) -> String { language == .english ? english["name"] ?? name : name }
    public func relationship(in language: ChatLanguage) -> String {
        language == .english ? english["relationship"] ?? relationship : relationship
    }
    public func service(in language: ChatLanguage) -> String {
        language == .english ? english["service"] ?? service : service
    }

    /// `<relationship> <name> باقي له <days> يوم على <service>`, the noun agreeing with the count (`30 يوماً`);
    /// in English `Your son Hussam: driving licence issue, due in 30 days`.
    public func message(daysRemaining days: Int, in language: ChatLanguage = .arabic) -> String {
        switch language {
        case .arabic:
            return "\(relationship) \(name) باقي \(isFemale ? "لها" : "له") \(arabicDays(days)) على \(service)"
        case .english:
            return "\(capitalized(relationship(in: language))) \(name(in: language)): \(service(in: language)), due in "
                + englishCount(days, .day)
        }
    }

    /// A `dependents` link to this record.
    public var deepLink: DeepLink { deepLink(in: .arabic) }

    public func deepLink(in language: ChatLanguage) -> DeepLink {
        DeepLink(
            serviceType: DependentsPlugin.linkType,
            title: "\(relationship(in: language)) \(name(in: language)): \(service(in: language))", alertId: id)
    }
}

/// An entry of the `dependents` array that was left out, and why.
public struct SkippedDependent: Sendable, Equatable {
    public init(index: Int, problems: [String]) {
        self.index = index
        self.problems = problems
    }

    /// Its position in the array.
    public var index: Int
    /// The fields that are missing, empty or invalid (`name`, `dueDate`).
    public var problems: [String]
}

/// The `dependents` array read leniently: complete entries in file order, and the entries left out because a
/// field is missing, empty or invalid — they are never shown half-filled. An unknown key is still an error (a
/// misspelt field would otherwise hide a dependent silently).
public struct DependentList: Sendable, Equatable {
    public var dependents: [Dependent]
    public var skipped: [SkippedDependent]

    public init(dependents: [Dependent], skipped: [SkippedDependent]) {
        self.dependents = dependents
        self.skipped = skipped
    }

    public init(_ entries: [JSONValue], file: String, plugin: String) throws {
        var dependents: [Dependent] = []
        var skipped: [SkippedDependent] = []
        for (i, entry) in entries.enumerated() {
            guard case .object(let o) = entry else {
                skipped.append(SkippedDependent(index: i, problems: ["not an object"]))
                continue
            }
            for key in o.keys.sorted() where !Dependent.keys.contains(key) {
                throw PluginError.invalidData(
                    plugin: plugin, file: file, keyPath: "dependents[\(i)].\(key)",
                    problem: "unknown key; valid keys here: \(Dependent.keys.joined(separator: ", "))")
            }
            var problems: [String] = []
            func text(_ key: String) -> String? {
                guard let s = o[key]?.stringValue?.trimmingSpacesAndNewlines, !s.isEmpty else {
                    problems.append(key)
                    return nil
                }
                return s
            }
            let name = text("name")
            let relationship = text("relationship")
            let service = text("service")
            let dueText = text("dueDate")
            var due: CivilDate?
            if let dueText {
                due = CivilDate(iso: dueText)
                if due == nil { problems.append("dueDate") }
            }
            var english: [String: String] = [:]
            if let en = o["en"] {
                guard case .object(let e) = en else {
                    throw PluginError.invalidData(
                        plugin: plugin, file: file, keyPath: "dependents[\(i)].en",
                        problem:
                            "expected an object of English texts (\(Dependent.englishKeys.joined(separator: ", ")))")
                }
                for (key, value) in e {
                    guard Dependent.englishKeys.contains(key), let text = value.stringValue, !text.isEmpty else {
                        throw PluginError.invalidData(
                            plugin: plugin, file: file, keyPath: "dependents[\(i)].en.\(key)",
                            problem:
                                "expected one of \(Dependent.englishKeys.joined(separator: ", ")) with a non-empty string"
                        )
                    }
                    english[key] = text
                }
            }
            if let name, let relationship, let service, let due, problems.isEmpty {
                let id = o["id"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? "dependent-\(i + 1)"
                dependents.append(
                    Dependent(
                        id: id, name: name, relationship: relationship, isFemale: o["gender"]?.stringValue == "female",
                        service: service, dueDate: due, english: english))
            } else {
                skipped.append(SkippedDependent(index: i, problems: problems))
            }
        }
        self.dependents = dependents
        self.skipped = skipped
    }
}

extension String {
    var trimmingSpacesAndNewlines: String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}
