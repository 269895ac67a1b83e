import Foundation
import SanadChat
import SanadCore

/// The web chat behind `/`: one `ChatSession` (greeting, plugin chips, grounded replies, deep links) per browser
/// conversation, each borrowing a generation slot for a turn. `POST /chat/open` starts one, `/chat/send` streams a
/// turn as server-sent events, `/chat/follow` opens a deep link's page, `/chat/back` returns to the chat.
public final class WebChatService: Sendable {
    /// Makes a conversation's chat over its borrowed session, in the language the page asked for (nil: the
    /// server's).
    public typealias ChatFactory = @Sendable (BorrowedSession, ChatLanguage?) -> ChatSession

    /// The paths it answers.
    public static let routes: [(method: String, path: String)] = [
        ("GET", "/"), ("POST", "/chat/open"), ("POST", "/chat/send"), ("POST", "/chat/follow"), ("POST", "/chat/back"),
        ("GET", "/app.css"), ("GET", "/app.js"),
    ]

    private let pool: SlotPool<any InferenceSession>
    private let reference: any InferenceSession
    private let makeChat: ChatFactory
    private let linkFormat: DeepLinkFormat
    private let page: String
    private let languages: [ChatLanguage]
    /// The plugins' places in the web app (`WebPlace`), each under its own path.
    let places: [any WebPlace]
    /// The product's login page (`ChatProduct.loginPage`) for a server with an API key; nil: a plain one.
    let loginPage: String?
    private let conversations = ConversationStore(capacity: 64, perBrowser: 8)

    /// `page` is the product's web chat page (`ChatProduct.webPage`), served at `/`; `languages` those a page may
    /// ask for (`POST /chat/open {"lang": "en"}`).
    public init(
        pool: SlotPool<any InferenceSession>, reference: any InferenceSession, linkFormat: DeepLinkFormat,
        page: String, languages: [ChatLanguage] = ChatLanguage.allCases, places: [any WebPlace] = [],
        loginPage: String? = nil, makeChat: @escaping ChatFactory
    ) {
        self.loginPage = loginPage
        self.places = places
        self.pool = pool
        self.reference = reference
        self.linkFormat = linkFormat
        self.page = page
        self.languages = languages
        self.makeChat = makeChat
    }

    /// The place that owns `path` (its page, or a path under it), if any.
    func place(for path: String) -> (any WebPlace)? {
        places.first { path == $0.prefix || path.hasPrefix($0.prefix + "/") }
    }

    /// Answers a request to `place` (the server's checks done); returns the status.
    func respond(_ request: HTTPRequest, place: any WebPlace, _ channel: ResponseChannel) -> Int {
        let head = request.head
        let web = WebRequest(
            method: head.method == "HEAD" ? "GET" : head.method, path: head.path, query: queryParameters(head.target),
            body: Array(request.body))
        let reply = channel.runCancellable { () -> Result<WebReply, any Error> in
            do { return .success(try await place.respond(to: web)) } catch { return .failure(error) }
        }
        switch reply {
        case .success(let r)?:
            var headers: [(name: String, value: String)] = [("Content-Type", r.contentType)]
            if let name = r.fileName {
                headers.append(("Content-Disposition", "attachment; filename=\"\(name)\""))
            }
            channel.send(HTTPResponse(status: r.status, headers: headers, body: r.body))
            return r.status
        case .failure(let error)?:
            let refused = APIError(400, "\(error)", code: "invalid_request")
            channel.send(refused.response)
            return 400
        case nil: return 499
        }
    }

    /// Answers `request` (its route already matched); returns the status.
    func respond(_ request: HTTPRequest, _ channel: ResponseChannel) throws(APIError) -> Int {
        let path = request.head.path
        if path == "/" {
            channel.send(.text(200, page, contentType: "text/html; charset=utf-8"))
            return 200
        }
        if let asset = WebAppAssets.files[path] {
            channel.send(.text(200, asset.text, contentType: asset.contentType))
            return 200
        }
        let body = request.body.isEmpty ? [:] : try decodeJSONObject(request.body, maximumBytes: 1 << 20)
        let browser = browserCookie(request.head)
        if path == "/chat/open" {
            var language: ChatLanguage?
            if let code = body["lang"] {
                guard let asked = code.stringValue.flatMap(ChatLanguage.init(code:)), languages.contains(asked) else {
                    throw APIError.invalid(
                        "lang", "'lang' must be one of \(languages.map(\.rawValue).joined(separator: ", "))")
                }
                language = asked
            }
            return open(browser: browser, language: language, channel)
        }
        guard let browser, let id = body["conversation"]?.stringValue, let conversation = conversations[id, browser]
        else {
            throw APIError.invalid(
                "conversation", "unknown conversation (for this browser's cookie); POST /chat/open starts one")
        }
        switch path {
        case "/chat/send": return send(body, conversation, channel)
        case "/chat/follow":
            guard let url = body["url"]?.stringValue else { throw APIError.invalid("url", "'url' must be a string") }
            let page = channel.runCancellable { () -> Result<Destination, any Error> in
                do { return .success(try await conversation.chat.follow(url: url)) } catch { return .failure(error) }
            }
            switch page {
            case .success(let destination): channel.send(.json(200, destination.json(linkFormat).jsonString))
            case .failure(let error): throw APIError(400, "\(error)", param: "url")
            case nil: return 499
            }
            return 200
        default:
            _ = channel.runCancellable { await conversation.chat.returnToChat() }
            channel.send(.json(200, #"{"ok":true}"#))
            return 200
        }
    }

    /// A new conversation of `browser` (a new browser id, set as a cookie, when the request has none): its id,
    /// the greeting and the chips (or the load failure, with `retry` true).
    private func open(browser: String?, language: ChatLanguage?, _ channel: ResponseChannel) -> Int {
        let owner = browser ?? randomID()
        let borrowed = BorrowedSession(reference: reference)
        let conversation = Conversation(chat: makeChat(borrowed, language), borrowed: borrowed)
        let id = conversations.add(conversation, browser: owner)
        let format = linkFormat
        let state = channel.runCancellable { () -> JSONValue in
            await conversation.chat.open()
            let messages = await conversation.chat.messages.map { entryJSON($0, format) }
            let chips = await conversation.chat.suggestions.map(chipJSON)
            let engine = await conversation.chat.engineState
            var failure: JSONValue = .null
            if case .failed(let reason) = engine { failure = .string(reason) }
            return .object([
                "conversation": .string(id), "messages": .array(messages), "chips": .array(chips), "failure": failure,
                "language": .string(await conversation.chat.configuration.language.rawValue),
            ])
        }
        guard let state else { return 499 }
        let cookie =
            browser == nil ? [("Set-Cookie", "\(browserCookieName)=\(owner); Path=/; HttpOnly; SameSite=Strict")] : []
        channel.send(.json(200, state.jsonString, headers: cookie))
        return 200
    }

    /// One turn (`text`, or `chip` = a suggestion id) on a lent slot, streamed as events.
    private func send(_ body: [String: JSONValue], _ conversation: Conversation, _ channel: ResponseChannel) -> Int {
        let text = body["text"]?.stringValue
        let chip = body["chip"]?.stringValue
        guard (text == nil) != (chip == nil) else {
            channel.send(APIError.invalid("text", "send either 'text' or 'chip'").response)
            return 400
        }
        let session: any InferenceSession
        switch pool.acquire(abandon: { channel.clientGone }) {
        case .slot(let s): session = s
        case .abandoned: return 499
        case .queueFull:
            channel.send(APIError(503, "every slot is busy; retry shortly", type: "server_error").response)
            return 503
        }
        conversation.borrowed.lend(session)
        var held = true
        func giveBack() {  // before the last event leaves, so the browser's next turn finds the slot free
            if held {
                conversation.borrowed.lend(nil)
                pool.release(session)
            }
            held = false
        }
        defer { giveBack() }
        channel.startStream(
            status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
        let linkFormat = linkFormat
        let emit: ChatEventHandler = { event in
            if let json = eventJSON(event, linkFormat) { channel.write(serverSentEvent(json.jsonString)) }
        }
        _ = channel.runCancellable {
            do {
                if let chip {
                    let turn = try await conversation.chat.tap(chip)
                    emit(.messageAdded(turn.userMessage))
                    await conversation.chat.respond(to: turn, onEvent: emit)
                } else if let text {
                    try await conversation.chat.send(text, onEvent: emit)
                }
                emit(.suggestionsChanged(await conversation.chat.suggestions))
            } catch {
                channel.write(
                    serverSentEvent(
                        JSONValue.object(["type": .string("error"), "message": .string("\(error)")]).jsonString))
            }
        }
        giveBack()
        channel.write(serverSentEvent("[DONE]"))
        channel.endStream()
        return 200
    }
}

/// A browser conversation: its chat and the session it borrows slots through.
final class Conversation: Sendable {
    let chat: ChatSession
    let borrowed: BorrowedSession

    init(chat: ChatSession, borrowed: BorrowedSession) {
        self.chat = chat
        self.borrowed = borrowed
    }
}

/// The parameters of `target`'s query, percent-decoded (`+` as a space); the last of a repeated name wins.
func queryParameters(_ target: String) -> [String: String] {
    guard let mark = target.firstIndex(of: "?") else { return [:] }
    var out: [String: String] = [:]
    for pair in target[target.index(after: mark)...].split(separator: "&") {
        let parts = pair.split(separator: "=", maxSplits: 1).map {
            String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
        }
        out[parts[0]] = parts.count > 1 ? parts[1] : ""
    }
    return out
}

/// The cookie naming a browser: its conversations are its own.
let browserCookieName = "sanad_browser"

/// The browser id of the request's cookie (32 hex digits), or nil.
func browserCookie(_ head: HTTPRequestHead) -> String? {
    guard let value = cookie(browserCookieName, in: head), value.count == 32, value.allSatisfy(\.isHexDigit) else {
        return nil
    }
    return value
}

/// 128 random bits as 32 hex digits.
func randomID() -> String {
    (0..<2).map { _ in
        let hex = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }.joined()
}

/// Conversations by id, each bound to the browser (cookie) that opened it. A browser keeps at most `perBrowser`
/// (its least recently used one goes). Beyond `capacity` in all, the oldest conversation never used since it was
/// opened goes first, else the least recently used one of the browser holding the most: so a client opening many
/// cannot evict the conversations people are having.
final class ConversationStore: @unchecked Sendable {  // `items` and `order` are guarded by `lock`
    private let lock = NSLock()
    private let capacity: Int
    private let perBrowser: Int
    private var items: [String: (conversation: Conversation, browser: String, used: Bool)] = [:]
    /// Ids, least recently used first.
    private var order: [String] = []

    init(capacity: Int, perBrowser: Int) {
        self.capacity = capacity
        self.perBrowser = perBrowser
    }

    func add(_ conversation: Conversation, browser: String) -> String {
        let id = randomID()
        lock.withLock {
            items[id] = (conversation, browser, false)
            order.append(id)
            if count(of: browser) > perBrowser { evictOldest(of: browser) }
            while order.count > capacity { evictOne() }
        }
        return id
    }

    /// The conversation `id` if `browser` opened it.
    subscript(id: String, browser: String) -> Conversation? {
        lock.withLock {
            guard let item = items[id], item.browser == browser else { return nil }
            items[id]?.used = true
            order.removeAll { $0 == id }
            order.append(id)
            return item.conversation
        }
    }

    private func count(of browser: String) -> Int { items.values.filter { $0.browser == browser }.count }

    private func evictOldest(of browser: String) {
        guard let id = order.first(where: { items[$0]?.browser == browser }) else { return }
        order.removeAll { $0 == id }
        items.removeValue(forKey: id)
    }

    private func evictOne() {
        var counts: [String: Int] = [:]
        for item in items.values { counts[item.browser, default: 0] += 1 }
        guard let largest = counts.values.max() else { return }
        func inLargest(_ id: String) -> Bool { items[id].map { counts[$0.browser] == largest } ?? false }
        guard let id = order.first(where: { items[$0]?.used == false }) ?? order.first(where: inLargest) else {
            return
        }
        order.removeAll { $0 == id }
        items.removeValue(forKey: id)
    }
}

func entryJSON(_ e: ChatEntry, _ format: DeepLinkFormat) -> JSONValue {
    .object([
        "id": .string(e.id), "content": .string(e.content), "isUser": .bool(e.isUser),
        "link": e.deepLink.map { .object(["title": .string($0.title), "url": .string($0.url(format))]) }
            ?? .null,
        "check": e.check.map { check in
            var fields: [String: JSONValue] = ["verified": .bool(check.verified), "note": .string(check.note)]
            if let draft = check.draft { fields["draft"] = .string(draft) }
            return .object(fields)
        } ?? .null,
    ])
}

func chipJSON(_ s: ChatSuggestion) -> JSONValue { .object(["id": .string(s.id), "text": .string(s.text)]) }

/// A chat event as the page reads it (nil for those it does not show).
func eventJSON(_ event: ChatEvent, _ format: DeepLinkFormat) -> JSONValue? {
    switch event {
    case .messageAdded(let e): return .object(["type": .string("message"), "message": entryJSON(e, format)])
    case .suggestionsChanged(let s): return .object(["type": .string("chips"), "chips": .array(s.map(chipJSON))])
    case .replyStarted(let id): return .object(["type": .string("start"), "id": .string(id)])
    case .draftChecked(let id, let draft, let verdict):
        // Sent only by a chat with `showDrafts` (`sanad serve --show-drafts`).
        var why: [JSONValue] = []
        if case .rejected(let reasons) = verdict { why = reasons.map(JSONValue.string) }
        return .object([
            "type": .string("draft"), "id": .string(id), "text": .string(draft), "verified": .bool(verdict.isVerified),
            "reasons": .array(why),
        ])
    case .replyPiece(_, _, let text): return .object(["type": .string("piece"), "text": .string(text)])
    case .replyFinished(let e, _, _): return .object(["type": .string("reply"), "message": entryJSON(e, format)])
    case .navigated(let d): return .object(["type": .string("page"), "page": d.json(format)])
    case .engineStateChanged, .processingChanged: return nil
    }
}
