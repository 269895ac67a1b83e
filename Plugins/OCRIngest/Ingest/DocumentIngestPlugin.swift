import Foundation
import SanadChat
import SanadCore

/// The `ocr-ingest` feature plugin: offers the `ingest_document` tool (a document's text or an image file → the
/// zone, barcode or text chunks it holds and the form fields it supports, with evidence).
///
/// Options (host config): `language` (Tesseract languages for images, default `eng`; `ara`, `eng+ara`, …).
public final class DocumentIngestPlugin: FeaturePlugin {
    public static let pluginID = OCRIngest.pluginID
    public static let optionKeys = ["language"]
    public static let defaultLanguage = "eng"

    public let id = DocumentIngestPlugin.pluginID
    public let language: String
    let now: @Sendable () -> Date

    public init(context: PluginContext) throws {
        let options = try PluginOptions(plugin: Self.pluginID, context: context, allowed: Self.optionKeys)
        language = try options.string("language") ?? Self.defaultLanguage
        now = context.now
    }

    public var tools: [any Tool] { [ingestTool] }

    public var capabilities: [String] { capabilities(in: .arabic) }

    public func capabilities(in language: ChatLanguage) -> [String] {
        [
            language == .arabic
                ? "قراءة بيانات الجواز ورخصة القيادة من نص المسح الضوئي"
                : "reading the data of a passport or driving licence from its scanned text"
        ]
    }

    /// Today in the device's time zone: two-digit MRZ years resolve against it.
    public var today: CivilDate { DocumentIngest.calendarDate(now()) }

    var ingestTool: PluginTool {
        PluginTool(
            name: "ingest_document",
            description:
                "Reads a passport or ID machine-readable zone, a driver-licence barcode text, or any document text "
                + "(given as text or as an image file path) and returns what it holds and the form fields it fills.",
            arguments: [
                ToolArgument("text"), ToolArgument("imagePath"), ToolArgument("documentId"),
                ToolArgument(
                    "kind",
                    schema: .object([
                        "type": .string("string"), "enum": .array(DocumentKind.allCases.map { .string($0.rawValue) }),
                    ])),
            ]
        ) { [self] args in
            let kindName = try args.optionalString("kind") ?? DocumentKind.auto.rawValue
            guard let kind = DocumentKind(rawValue: kindName) else {
                throw ToolError(
                    tool: "ingest_document",
                    "kind '\(kindName)' is not one of: \(DocumentKind.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            let text = try args.optionalString("text")
            let image = try args.optionalString("imagePath")
            guard (text == nil) != (image == nil) else {
                throw ToolError(tool: "ingest_document", "give exactly one of 'text' and 'imagePath'")
            }
            let documentID = try args.optionalString("documentId") ?? "document"
            if let image {
                return try DocumentIngest.ingest(
                    imageAt: image, documentID: documentID, kind: kind, language: language, reference: today,
                    ocr: TesseractOCR()
                ).json
            }
            return try DocumentIngest.ingest(
                text: text ?? "", documentID: documentID, kind: kind, reference: today
            ).json
        }
    }
}

extension DocumentIngest {
    /// The calendar date of `instant` in the current time zone.
    public static func calendarDate(_ instant: Date, timeZone: TimeZone = .current) -> CivilDate {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.year, .month, .day], from: instant)
        return CivilDate(year: c.year ?? 1970, month: c.month ?? 1, day: c.day ?? 1)
            ?? CivilDate(year: 1970, month: 1, day: 1)!
    }
}
