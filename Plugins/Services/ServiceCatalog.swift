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

        /// `300 ريال لمدة 5 سنوات`; a zero amount reads `بدون رسوم`.
        public var sentence: String { amountSAR == 0 ? "بدون رسوم \(label)" : "\(amountSAR) ريال \(label)" }
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
}

/// The services knowledge base (`Plugins/AbsherData/Resources/services.json`), read strictly: an unknown key, a
/// wrong type, a repeated id or an unknown document type is an error naming the file and the key path.
public struct ServiceCatalog: Sendable, Equatable {
    public var file: URL
    public var services: [ServiceInfo]

    static let keys = [
        "id", "name", "document", "documentName", "documentFeminine", "keywords", "actionKeywords", "description",
        "fees", "requirements", "link",
    ]

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
            func text(_ key: String, required: Bool = true) throws -> String? {
                guard let v = o[key] else {
                    if required { throw fail("\(path).\(key)", "missing required key") }
                    return nil
                }
                guard let s = v.stringValue, !s.trimmingCharacters(in: .whitespaces).isEmpty else {
                    throw fail("\(path).\(key)", "expected a non-empty string, found \(v)")
                }
                return s
            }
            func texts(_ key: String) throws -> [String] {
                guard let v = o[key] else { throw fail("\(path).\(key)", "missing required key (use [] for none)") }
                guard let a = v.arrayValue else { throw fail("\(path).\(key)", "expected an array of strings") }
                return try a.enumerated().map { j, item in
                    guard let s = item.stringValue, !s.isEmpty else {
                        throw fail("\(path).\(key)[\(j)]", "expected a non-empty string, found \(item)")
                    }
                    return s
                }
            }
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
                fees.append(ServiceInfo.Fee(label: label, amountSAR: amount))
            }
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
                    description: description, fees: fees, requirements: try texts("requirements"),
                    linkType: link))
        }
        guard !services.isEmpty else { throw fail("services", "is empty; list at least one service") }
        return ServiceCatalog(file: url, services: services)
    }
}
