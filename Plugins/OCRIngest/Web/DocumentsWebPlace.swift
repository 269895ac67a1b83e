import Foundation
import SanadChat
import SanadCore

/// The documents' place in the web app (`sanad serve`, at `/documents`): the page (`Resources/documents.html`) and
/// the one call that reads an upload as `sanad ingest` does:
///
///     GET  /documents                      the page
///     POST /documents/api/read {"name", "data": BASE64, "kind": "auto|mrz|aamva|text"}
///                                          an image (through Tesseract) or UTF-8 text → `IngestedDocument.json`
///                                          with `cleanedText` (the text as read, cleaned)
///
/// Filling a form from what was read is the Forms place's (`/forms/api/fields`, `/forms/api/propose`): the page
/// offers each proposal there, one by one, so the two plugins stay apart.
struct DocumentsWebPlace: WebPlace {
    let plugin: DocumentIngestPlugin
    let prefix = "/documents"

    func respond(to request: WebRequest) async throws -> WebReply {
        let route = String(request.path.dropFirst(prefix.count))
        if route == "" || route == "/" {
            guard let page = Self.page else {
                throw DocumentsPlaceError(
                    "the documents page (Resources/documents.html) is not shipped; rebuild sanad")
            }
            return .html(page)
        }
        guard request.method == "POST", route == "/api/read" else {
            throw DocumentsPlaceError(
                "no call \(request.method) \(request.path); see Plugins/OCRIngest/README.md (the web app)")
        }
        let body = try JSONValue.parse(Data(request.body))
        let name = URL(fileURLWithPath: body["name"]?.stringValue ?? "document").lastPathComponent
        guard let text = body["data"]?.stringValue, let data = Data(base64Encoded: text), !data.isEmpty else {
            throw DocumentsPlaceError("/documents/api/read needs 'data': the file's bytes in base64")
        }
        let kindName = body["kind"]?.stringValue ?? DocumentKind.auto.rawValue
        guard let kind = DocumentKind(rawValue: kindName) else {
            throw DocumentsPlaceError(
                "kind '\(kindName)' is not one of: \(DocumentKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return .json(try read(Array(data), name: name, kind: kind))
    }

    /// The upload read: an image's text through Tesseract (in the plugin's `language`), else the bytes as UTF-8.
    func read(_ bytes: [UInt8], name: String, kind: DocumentKind) throws -> JSONValue {
        var raw: String
        var ocr: String?
        if DocumentIngest.isImage(header: Array(bytes.prefix(12))) {
            let engine = try TesseractOCR()
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("sanad-upload-\(UUID())")
            try Data(bytes).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            raw = try engine.recognize(imageAt: file.path, language: plugin.language)
            ocr = "Tesseract \(engine.version) (\(plugin.language))"
        } else {
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw DocumentsPlaceError(
                    "\(name) is neither an image (PNG, JPEG, TIFF, GIF, BMP, PNM, WebP) nor UTF-8 text")
            }
            raw = text
        }
        let document = try DocumentIngest.ingest(
            text: raw, documentID: name, kind: kind, reference: plugin.today, ocr: ocr)
        guard case .object(var json) = document.json else { return document.json }
        json["cleanedText"] = .string(OCRText.clean(raw).text)
        return .object(json)
    }

    /// The page, in the plugin's shipped resources (`Resources/documents.html`).
    static let page = shippedWebPage(
        "documents.html", bundle: "Sanad_OCRIngestPlugin.resources",
        sourceFolder: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent())
}

/// A request the documents place cannot answer, with what to send instead.
struct DocumentsPlaceError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension DocumentIngestPlugin {
    public var webPlace: (any WebPlace)? { DocumentsWebPlace(plugin: self) }
}
