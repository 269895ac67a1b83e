import AbsherData
import Foundation
import SanadChat
import SanadCore

/// One service of the knowledge base: what it is, who may use it, what it costs, what it needs, how and where it is
/// done, the link that opens it, and the public page its facts come from. A fact the file marks `"unknown"` is nil
/// here and is answered as not in Sanad's data, with the link.
public struct ServiceInfo: Sendable, Equatable {
    /// A fee line: `300 ريال لمدة 5 سنوات`.
    public struct Fee: Sendable, Equatable {
        public var label: String
        public var amountSAR: Int
        /// The label in English (`for 5 years`).
        public var englishLabel: String

        /// `300 ريال لمدة 5 سنوات`; a zero amount reads `بدون رسوم`.
        public var sentence: String { sentence(in: .arabic) }

        /// `300 ريال لمدة 5 سنوات` / `300 SAR for 5 years`; a zero amount reads `بدون رسوم` / `no fee`.
        public func sentence(in language: ChatLanguage) -> String {
            switch language {
            case .arabic: return amountSAR == 0 ? "بدون رسوم \(label)" : "\(amountSAR) ريال \(label)"
            case .english: return amountSAR == 0 ? "no fee \(englishLabel)" : "\(amountSAR) SAR \(englishLabel)"
            }
        }
    }

    /// Where the service's facts come from: the public page, the date of the knowledge it was written from, and
    /// whether it was checked online (never, from a machine that cannot reach the page).
    public struct Source: Sendable, Equatable {
        public var url: String
        public var page: String
        public var asOf: String
        public var checked: String
    }

    /// A service's texts in English (the `en` object): the same facts as the Arabic ones, item for item.
    public struct EnglishText: Sendable, Equatable {
        public var name: String
        public var documentName: String?
        public var description: String
        public var eligibility: String?
        public var requirements: [String]?
        public var steps: [String]?
        public var whereText: String?
    }

    public var id: String
    public var name: String
    /// The kind of document this service renews or issues (`UserData.documentKinds`), when it is one.
    public var document: String?
    /// The document's name (`جواز السفر`) and whether it is grammatically feminine, for verb agreement.
    public var documentName: String?
    public var documentFeminine: Bool
    /// Words that name the service's subject (`جواز*`), see `TypedQuestion`.
    public var keywords: [String]
    /// Words that name what is done (`تجديد*`); they choose between services with the same subject.
    public var actionKeywords: [String]
    /// Words that mean the question is about something else (`مستشفى` for appointments).
    public var excludedKeywords: [String]
    public var description: String
    /// Who may use it; nil when unknown.
    public var eligibility: String?
    /// nil when unknown; empty when the page states there is no fee.
    public var fees: [Fee]?
    /// Fines for being late (an expired document); nil when unknown.
    public var lateFines: [Fee]?
    public var requirements: [String]?
    public var steps: [String]?
    /// The channel or office; nil when unknown.
    public var whereText: String?
    /// The deep link `serviceType`: the renewal service of the user's document (opened by the proactive alerts
    /// plugin's page), or `service_info` (this plugin's own page).
    public var linkType: String
    public var source: Source
    public var english: EnglishText

    public func name(in language: ChatLanguage) -> String { language == .arabic ? name : english.name }
    public func documentName(in language: ChatLanguage) -> String? {
        language == .arabic ? documentName : english.documentName
    }
    public func description(in language: ChatLanguage) -> String {
        language == .arabic ? description : english.description
    }
    public func eligibility(in language: ChatLanguage) -> String? {
        language == .arabic ? eligibility : english.eligibility
    }
    public func requirements(in language: ChatLanguage) -> [String]? {
        language == .arabic ? requirements : english.requirements
    }
    public func steps(in language: ChatLanguage) -> [String]? { language == .arabic ? steps : english.steps }
    public func whereText(in language: ChatLanguage) -> String? {
        language == .arabic ? whereText : english.whereText
    }
}

/// The services knowledge base (`Plugins/AbsherData/Resources/services.json`), read strictly: an unknown key, a
/// wrong type, a repeated id, an unknown document kind or an English text that does not match the Arabic item for
/// item is an error naming the file and the key path. A fact may be `"unknown"`.
public struct ServiceCatalog: Sendable, Equatable {
    public var file: URL
    public var services: [ServiceInfo]

    /// The value that marks a fact as not known.
    public static let unknown = "unknown"

    static let keys = [
        "id", "name", "document", "documentName", "documentFeminine", "keywords", "actionKeywords", "excludedKeywords",
        "description",
        "eligibility", "fees", "lateFines", "requirements", "steps", "where", "link", "source", "en",
    ]
    static let englishKeys = [
        "name", "documentName", "description", "eligibility", "feeLabels", "lateFineLabels", "requirements", "steps",
        "where",
    ]
    static let sourceKeys = ["url", "page", "asOf", "checked"]

    public static func load(from url: URL, plugin: String) throws -> ServiceCatalog {
        func fail(_ path: String, _ problem: String) -> PluginError {
            .invalidData(plugin: plugin, file: url.path, keyPath: path, problem: problem)
        }
        let json: JSONValue
        do {
            json = try JSONValue.parse(try Data(contentsOf: url))
        } catch {
            throw fail("", "cannot read it as JSON (\(error)); set the plugin's services option to a valid file")
        }
        guard case .object(let root) = json else { throw fail("", "expected an object, found \(json.kindName)") }
        for key in root.keys.sorted() where !["note", "services"].contains(key) {
            throw fail(key, "unknown key; valid keys here: note, services")
        }
        guard let list = root["services"]?.arrayValue else { throw fail("services", "missing, or not an array") }
        var services: [ServiceInfo] = []
        for (i, entry) in list.enumerated() {
            let service = try service(entry, path: "services[\(i)]", fail: fail)
            guard !services.contains(where: { $0.id == service.id }) else {
                throw fail("services[\(i)].id", "'\(service.id)' is used by an earlier service")
            }
            services.append(service)
        }
        guard !services.isEmpty else { throw fail("services", "is empty; list at least one service") }
        return ServiceCatalog(file: url, services: services)
    }

    /// One entry of `services`.
    static func service(_ entry: JSONValue, path: String, fail: @escaping (String, String) -> PluginError) throws
        -> ServiceInfo
    {
        guard case .object(let o) = entry else { throw fail(path, "expected an object, found \(entry.kindName)") }
        for key in o.keys.sorted() where !keys.contains(key) {
            throw fail("\(path).\(key)", "unknown key; valid keys here: \(keys.joined(separator: ", "))")
        }
        let fields = TextFields(object: o, path: path, fail: fail)
        let id = try fields.text("id") ?? ""
        let name = try fields.text("name") ?? ""
        let description = try fields.text("description") ?? ""
        let document = try fields.text("document", required: false)
        if let document, !UserData.documentKinds.contains(document) {
            throw fail(
                "\(path).document", "'\(document)' is not one of: \(UserData.documentKinds.joined(separator: ", "))")
        }
        let documentName = try fields.text("documentName", required: false)
        if document != nil && documentName == nil {
            throw fail("\(path).documentName", "missing; a service with a document names it")
        }
        var feminine = false
        if let f = o["documentFeminine"] {
            guard let b = f.boolValue else { throw fail("\(path).documentFeminine", "expected true or false") }
            feminine = b
        }
        var fees = try fields.fees("fees")
        var lateFines = try fields.fees("lateFines")
        let requirements = try fields.knownTexts("requirements")
        let steps = try fields.knownTexts("steps")
        guard let en = o["en"]?.objectValue else {
            throw fail(
                "\(path).en",
                "missing, or not an object: the service's texts in English (\(englishKeys.joined(separator: ", ")))")
        }
        for key in en.keys.sorted() where !englishKeys.contains(key) {
            throw fail("\(path).en.\(key)", "unknown key; valid keys here: \(englishKeys.joined(separator: ", "))")
        }
        let english = TextFields(object: en, path: "\(path).en", fail: fail)
        let englishName = try english.text("documentName", required: documentName != nil)
        if documentName == nil, englishName != nil {
            throw fail("\(path).en.documentName", "given, but the service names no document")
        }
        try english.labels("feeLabels", for: &fees)
        try english.labels("lateFineLabels", for: &lateFines)
        let englishText = ServiceInfo.EnglishText(
            name: try english.text("name") ?? "", documentName: englishName,
            description: try english.text("description") ?? "",
            eligibility: try english.mirror("eligibility", of: try fields.knownText("eligibility")),
            requirements: try english.mirror("requirements", of: requirements),
            steps: try english.mirror("steps", of: steps),
            whereText: try english.mirror("where", of: try fields.knownText("where")))
        guard let link = o["link"]?["serviceType"]?.stringValue, !link.isEmpty, o["link"]?.objectValue?.count == 1
        else {
            throw fail("\(path).link", "expected {\"serviceType\": text}")
        }
        guard let s = o["source"]?.objectValue else {
            throw fail(
                "\(path).source", "missing: the public page its facts come from (\(sourceKeys.joined(separator: ", ")))"
            )
        }
        for key in s.keys.sorted() where !sourceKeys.contains(key) {
            throw fail("\(path).source.\(key)", "unknown key; valid keys here: \(sourceKeys.joined(separator: ", "))")
        }
        let sf = TextFields(object: s, path: "\(path).source", fail: fail)
        let source = ServiceInfo.Source(
            url: try sf.text("url") ?? "", page: try sf.text("page") ?? "", asOf: try sf.text("asOf") ?? "",
            checked: try sf.text("checked") ?? "")
        guard source.url.hasPrefix("https://") else {
            throw fail("\(path).source.url", "'\(source.url)' is not an https:// address of a public page")
        }
        let keywords = try fields.texts("keywords")
        guard !keywords.isEmpty else { throw fail("\(path).keywords", "is empty; name at least one keyword") }
        return ServiceInfo(
            id: id, name: name, document: document,
            documentName: documentName, documentFeminine: feminine, keywords: keywords,
            actionKeywords: try fields.texts("actionKeywords"),
            excludedKeywords: o["excludedKeywords"] == nil ? [] : try fields.texts("excludedKeywords"),
            description: description,
            eligibility: try fields.knownText("eligibility"), fees: fees, lateFines: lateFines,
            requirements: requirements, steps: steps, whereText: try fields.knownText("where"), linkType: link,
            source: source, english: englishText)
    }
}

/// Reads the string fields of one JSON object of the knowledge base; errors name the key path.
struct TextFields {
    let object: [String: JSONValue]
    let path: String
    let fail: (String, String) -> PluginError

    func text(_ key: String, required: Bool = true) throws -> String? {
        guard let v = object[key] else {
            if required { throw fail("\(path).\(key)", "missing required key") }
            return nil
        }
        guard let s = v.stringValue, !s.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw fail("\(path).\(key)", "expected a non-empty string, found \(v)")
        }
        return s
    }

    func texts(_ key: String) throws -> [String] {
        guard let v = object[key] else { throw fail("\(path).\(key)", "missing required key (use [] for none)") }
        guard let a = v.arrayValue else { throw fail("\(path).\(key)", "expected an array of strings") }
        return try a.enumerated().map { j, item in
            guard let s = item.stringValue, !s.isEmpty else {
                throw fail("\(path).\(key)[\(j)]", "expected a non-empty string, found \(item)")
            }
            return s
        }
    }
}

extension TextFields {
    /// A text that may be `"unknown"` (nil).
    func knownText(_ key: String) throws -> String? {
        if object[key]?.stringValue == ServiceCatalog.unknown { return nil }
        return try text(key)
    }

    /// A list of texts that may be `"unknown"` (nil).
    func knownTexts(_ key: String) throws -> [String]? {
        if object[key]?.stringValue == ServiceCatalog.unknown { return nil }
        return try texts(key)
    }

    /// A fee list (`[{"label": text, "amountSAR": n}]`) that may be `"unknown"` (nil).
    func fees(_ key: String) throws -> [ServiceInfo.Fee]? {
        if object[key]?.stringValue == ServiceCatalog.unknown { return nil }
        guard let list = object[key]?.arrayValue else {
            throw fail("\(path).\(key)", "missing, or neither an array nor \"unknown\" (use [] for no fee)")
        }
        return try list.enumerated().map { j, f in
            guard let label = f["label"]?.stringValue, let amount = f["amountSAR"]?.intValue, amount >= 0,
                f.objectValue?.count == 2
            else {
                throw fail(
                    "\(path).\(key)[\(j)]",
                    "expected {\"label\": text, \"amountSAR\": a whole number ≥ 0} and nothing else, found \(f)")
            }
            return ServiceInfo.Fee(label: label, amountSAR: amount, englishLabel: "")
        }
    }

    /// The English labels of `fees`, one per fee in order; `"unknown"` (or nothing) exactly when the fees are.
    func labels(_ key: String, for fees: inout [ServiceInfo.Fee]?) throws {
        guard var list = fees else {
            if let v = object[key], v.stringValue != ServiceCatalog.unknown {
                throw fail("\(path).\(key)", "given, but the Arabic facts are \"unknown\"; write \"unknown\" here too")
            }
            return
        }
        let labels = try texts(key)
        guard labels.count == list.count else {
            throw fail(
                "\(path).\(key)", "has \(labels.count) labels for \(list.count) fees; give one per fee, in order")
        }
        for j in list.indices { list[j].englishLabel = labels[j] }
        fees = list
    }

    /// The English of a text or list whose Arabic is `arabic`: unknown exactly when it is, the same number of items.
    func mirror<T>(_ key: String, of arabic: T?) throws -> T? {
        guard let arabic else {
            if let v = object[key], v.stringValue != ServiceCatalog.unknown {
                throw fail("\(path).\(key)", "given, but the Arabic fact is \"unknown\"; write \"unknown\" here too")
            }
            return nil
        }
        if let items = arabic as? [String] {
            let english = try texts(key)
            guard english.count == items.count else {
                throw fail(
                    "\(path).\(key)",
                    "has \(english.count) items for \(items.count) in Arabic; translate each, in order")
            }
            return english as? T
        }
        return try text(key) as? T
    }
}
