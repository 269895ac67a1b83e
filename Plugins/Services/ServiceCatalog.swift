import AbsherData
import Foundation
import SanadChat
import SanadCore

/// One service of the knowledge base: what it is, what it costs, what it needs, and the link that opens it.
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

    /// A service's texts in English (the `en` object): the same facts as the Arabic ones, item for item.
    public struct EnglishText: Sendable, Equatable {
        public var name: String
        public var documentName: String?
        public var description: String
        public var requirements: [String]
    }

    public var id: String
    public var name: String
    /// The user's document this service renews, when it renews one.
    public var document: DocumentType?
    /// The document's name (`جواز السفر`) and whether it is grammatically feminine, for verb agreement.
    public var documentName: String?
    public var documentFeminine: Bool
    /// Words that name the service's subject (`جواز*`), see `TypedQuestion`.
    public var keywords: [String]
    /// Words that name what is done (`تجديد*`); they choose between services with the same subject.
    public var actionKeywords: [String]
    public var description: String
    public var fees: [Fee]
    public var requirements: [String]
    /// The deep link `serviceType`: the renewal service of the user's document (opened by the proactive alerts
    /// plugin's page), or `service_info` (this plugin's own page).
    public var linkType: String
    public var english: EnglishText

    public func name(in language: ChatLanguage) -> String { language == .arabic ? name : english.name }
    public func documentName(in language: ChatLanguage) -> String? {
        language == .arabic ? documentName : english.documentName
    }
    public func description(in language: ChatLanguage) -> String {
        language == .arabic ? description : english.description
    }
    public func requirements(in language: ChatLanguage) -> [String] {
        language == .arabic ? requirements : english.requirements
    }
}

/// The services knowledge base (`Plugins/AbsherData/Resources/services.json`), read strictly: an unknown key, a
/// wrong type, a repeated id or an unknown document type is an error naming the file and the key path.
public struct ServiceCatalog: Sendable, Equatable {
    public var file: URL
    public var services: [ServiceInfo]

    static let keys = [
        "id", "name", "document", "documentName", "documentFeminine", "keywords", "actionKeywords", "description",
        "fees", "requirements", "link", "en",
    ]
    static let englishKeys = ["name", "documentName", "description", "feeLabels", "requirements"]

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
            let path = "services[\(i)]"
            guard case .object(let o) = entry else { throw fail(path, "expected an object, found \(entry.kindName)") }
            for key in o.keys.sorted() where !keys.contains(key) {
                throw fail("\(path).\(key)", "unknown key; valid keys here: \(keys.joined(separator: ", "))")
            }
            let fields = TextFields(object: o, path: path, fail: fail)
            func text(_ key: String, required: Bool = true) throws -> String? {
                try fields.text(key, required: required)
            }
            func texts(_ key: String) throws -> [String] { try fields.texts(key) }
            let id = try text("id") ?? ""
            let name = try text("name") ?? ""
            let description = try text("description") ?? ""
            guard !services.contains(where: { $0.id == id }) else {
                throw fail("\(path).id", "'\(id)' is used by an earlier service")
            }
            var document: DocumentType?
            if let d = try text("document", required: false) {
                guard let t = DocumentType(rawValue: d) else {
                    throw fail(
                        "\(path).document",
                        "'\(d)' is not one of: \(DocumentType.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                document = t
            }
            let documentName = try text("documentName", required: false)
            if document != nil && documentName == nil {
                throw fail("\(path).documentName", "missing; a service with a document names it")
            }
            var feminine = false
            if let f = o["documentFeminine"] {
                guard let b = f.boolValue else { throw fail("\(path).documentFeminine", "expected true or false") }
                feminine = b
            }
            var fees: [ServiceInfo.Fee] = []
            guard let feeList = o["fees"]?.arrayValue else {
                throw fail("\(path).fees", "missing, or not an array (use [] for none)")
            }
            for (j, f) in feeList.enumerated() {
                guard let label = f["label"]?.stringValue, let amount = f["amountSAR"]?.intValue, amount >= 0,
                    f.objectValue?.count == 2
                else {
                    throw fail(
                        "\(path).fees[\(j)]",
                        "expected {\"label\": text, \"amountSAR\": a whole number ≥ 0} and nothing else, found \(f)")
                }
                fees.append(ServiceInfo.Fee(label: label, amountSAR: amount, englishLabel: ""))
            }
            let requirements = try texts("requirements")
            guard let en = o["en"]?.objectValue else {
                throw fail(
                    "\(path).en",
                    "missing, or not an object: the service's texts in English (\(englishKeys.joined(separator: ", ")))"
                )
            }
            for key in en.keys.sorted() where !englishKeys.contains(key) {
                throw fail("\(path).en.\(key)", "unknown key; valid keys here: \(englishKeys.joined(separator: ", "))")
            }
            let english = TextFields(object: en, path: "\(path).en", fail: fail)
            let englishName = try english.text("documentName", required: documentName != nil)
            if documentName == nil, englishName != nil {
                throw fail("\(path).en.documentName", "given, but the service names no document")
            }
            let feeLabels = try english.texts("feeLabels")
            guard feeLabels.count == fees.count else {
                throw fail(
                    "\(path).en.feeLabels",
                    "has \(feeLabels.count) labels for \(fees.count) fees; give one per fee, in order")
            }
            for j in fees.indices { fees[j].englishLabel = feeLabels[j] }
            let englishRequirements = try english.texts("requirements")
            guard englishRequirements.count == requirements.count else {
                throw fail(
                    "\(path).en.requirements",
                    "has \(englishRequirements.count) items for \(requirements.count) requirements; translate each, in order"
                )
            }
            let englishText = ServiceInfo.EnglishText(
                name: try english.text("name") ?? "", documentName: englishName,
                description: try english.text("description") ?? "", requirements: englishRequirements)
            guard let link = o["link"]?["serviceType"]?.stringValue, !link.isEmpty, o["link"]?.objectValue?.count == 1
            else {
                throw fail("\(path).link", "expected {\"serviceType\": text}")
            }
            let keywords = try texts("keywords")
            guard !keywords.isEmpty else { throw fail("\(path).keywords", "is empty; name at least one keyword") }
            services.append(
                ServiceInfo(
                    id: id, name: name, document: document, documentName: documentName,
                    documentFeminine: feminine, keywords: keywords, actionKeywords: try texts("actionKeywords"),
                    description: description, fees: fees, requirements: requirements, linkType: link,
                    english: englishText))
        }
        guard !services.isEmpty else { throw fail("services", "is empty; list at least one service") }
        return ServiceCatalog(file: url, services: services)
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
