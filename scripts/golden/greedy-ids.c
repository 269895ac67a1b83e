// greedy-ids: the greedy loop of llama.cpp's examples/simple (llama-simple, build b11434), printing token ids.
//
// llama-simple prints only text; the reference data also needs the ids. This program makes the same calls in the
// same order as llama-simple: tokenize with add_special=true and parse_special=true, a context with
// n_ctx = n_prompt + n_predict - 1 and n_batch = n_prompt (other parameters default), the prompt decoded as one
// batch with logits for its last token only, a sampler chain holding only the greedy sampler, stop at an
// end-of-generation token or after n_predict tokens. scripts/make-golden checks that its text equals
// llama-simple's for every prompt.
//
// Teacher forcing (-i ID,ID,...): the same loop, but after each step the given token is fed instead of the greedy
// pick, for as many steps as ids are given (n_predict is their count, end-of-generation does not stop it); each step
// line still names the greedy pick of that step. scripts/make-golden --check uses it to measure how often another
// build picks the reference's token given the reference's context (top-1 agreement).
//
// Cache types (-ctk TYPE, -ctv TYPE): the KV cache's key and value types as llama-cli's -ctk/-ctv name them (f16,
// the default, q8_0, ...); everything else as above.
//
// Usage: greedy-ids -m MODEL [-n N_PREDICT] [-k TOP_K] [-t THREADS] [-i FORCED_IDS] [-ctk TYPE] [-ctv TYPE]
//                   -f PROMPT_FILE
//   PROMPT_FILE is read verbatim (no escape processing, no newline stripping). THREADS (default: llama.cpp's, 4) does
//   not change the numbers: every output element of ggml's CPU kernels is computed by one thread.
// Output, one record per line, fields separated by single spaces:
//   prompt_ids ID...
//   prompt_piece INDEX HEX            (the prompt token's piece, special tokens rendered, as hex bytes)
//   step INDEX ID HEX [TOPID:LOGIT]... (a generated token, its piece, and the TOP_K largest logits it came from)
//   eog ID                             (when generation stopped at an end-of-generation token)
//   done N_GENERATED
// Build: cc -O2 -o greedy-ids greedy-ids.c -I PREFIX/include -L PREFIX/lib -Wl,-rpath,PREFIX/lib -lllama

#include "llama.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_hex(const char * bytes, int n) {
    if (n == 0) {
        printf("-");
    }
    for (int i = 0; i < n; i++) {
        printf("%02x", (unsigned char) bytes[i]);
    }
}

// Same helper as llama-simple: tokens at consecutive positions from pos_0, logits for the last one only.
static void batch_set_tokens(struct llama_batch_ext * batch, const llama_token * tokens, int32_t n_tokens,
                             llama_pos pos_0) {
    llama_batch_ext_clear(batch);
    for (int32_t i = 0; i < n_tokens; ++i) {
        const int32_t   idx = llama_batch_ext_add_token(batch, 0, tokens[i]);
        const llama_pos pos = pos_0 + i;
        llama_batch_ext_set_pos(batch, idx, &pos);
    }
    llama_batch_ext_set_output_logits(batch, n_tokens - 1, true);
}

// The TOP_K largest logits (ties: lower id first), printed as id:logit with full float precision.
static void print_top_logits(const float * logits, int n_vocab, int top_k) {
    int * best = calloc((size_t) top_k, sizeof(int));
    int   n    = 0;
    for (int id = 0; id < n_vocab; id++) {
        int pos = n;
        while (pos > 0 && logits[best[pos - 1]] < logits[id]) {
            pos--;
        }
        if (pos >= top_k) {
            continue;
        }
        int last = n < top_k ? n : top_k - 1;
        for (int j = last; j > pos; j--) {
            best[j] = best[j - 1];
        }
        best[pos] = id;
        if (n < top_k) {
            n++;
        }
    }
    for (int i = 0; i < n; i++) {
        printf(" %d:%.9g", best[i], logits[best[i]]);
    }
    free(best);
}

static char * read_file(const char * path, size_t * size) {
    FILE * f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char * data = malloc(cap);
    size_t got;
    while ((got = fread(data + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            cap *= 2;
            data = realloc(data, cap);
        }
    }
    fclose(f);
    *size = len;
    return data;
}

// The ggml type llama-cli's -ctk/-ctv name NAME (common/arg.cpp's kv_cache_types), or GGML_TYPE_COUNT.
static enum ggml_type cache_type(const char * name) {
    static const struct {
        const char *   name;
        enum ggml_type type;
    } types[] = {
        { "f32", GGML_TYPE_F32 },       { "f16", GGML_TYPE_F16 },   { "bf16", GGML_TYPE_BF16 },
        { "q8_0", GGML_TYPE_Q8_0 },     { "q4_0", GGML_TYPE_Q4_0 }, { "q4_1", GGML_TYPE_Q4_1 },
        { "iq4_nl", GGML_TYPE_IQ4_NL }, { "q5_0", GGML_TYPE_Q5_0 }, { "q5_1", GGML_TYPE_Q5_1 },
    };
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        if (strcmp(name, types[i].name) == 0) {
            return types[i].type;
        }
    }
    return GGML_TYPE_COUNT;
}

int main(int argc, char ** argv) {
    setlocale(LC_NUMERIC, "C");

    const char * model_path  = NULL;
    const char * prompt_path = NULL;
    int          n_predict   = 32;
    int          top_k       = 0;
    int          n_threads   = 0;
    llama_token  forced[4096];
    int          n_forced    = -1;
    enum ggml_type type_k    = GGML_TYPE_F16;
    enum ggml_type type_v    = GGML_TYPE_F16;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-m") == 0 && i + 1 < argc) {
            model_path = argv[++i];
        } else if (strcmp(argv[i], "-f") == 0 && i + 1 < argc) {
            prompt_path = argv[++i];
        } else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
            n_predict = atoi(argv[++i]);
        } else if (strcmp(argv[i], "-k") == 0 && i + 1 < argc) {
            top_k = atoi(argv[++i]);
        } else if ((strcmp(argv[i], "-ctk") == 0 || strcmp(argv[i], "-ctv") == 0) && i + 1 < argc) {
            const int            is_k = strcmp(argv[i], "-ctk") == 0;
            const enum ggml_type type = cache_type(argv[++i]);
            if (type == GGML_TYPE_COUNT) {
                fprintf(stderr, "error: unknown cache type '%s' (f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1)\n", argv[i]);
                return 64;
            }
            *(is_k ? &type_k : &type_v) = type;
        } else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc) {
            n_threads = atoi(argv[++i]);
        } else if (strcmp(argv[i], "-i") == 0 && i + 1 < argc) {
            n_forced = 0;
            const char * p = argv[++i];
            while (*p && n_forced < (int) (sizeof(forced) / sizeof(forced[0]))) {
                char *     end;
                const long id = strtol(p, &end, 10);
                if (end == p || (*end != ',' && *end != '\0')) {
                    n_forced = 0;  // not a list of ids: reported below
                    break;
                }
                forced[n_forced++] = (llama_token) id;
                p                  = *end == ',' ? end + 1 : end;
            }
        } else {
            fprintf(stderr, "usage: %s -m MODEL [-n N_PREDICT] [-k TOP_K] [-t THREADS] [-i FORCED_IDS] [-ctk TYPE] [-ctv TYPE] -f PROMPT_FILE\n", argv[0]);
            return 64;
        }
    }
    if (!model_path || !prompt_path || n_predict < 1 || top_k < 0 || n_threads < 0) {
        fprintf(stderr, "usage: %s -m MODEL [-n N_PREDICT] [-k TOP_K] [-t THREADS] [-i FORCED_IDS] [-ctk TYPE] [-ctv TYPE] -f PROMPT_FILE\n", argv[0]);
        return 64;
    }
    if (n_forced == 0) {
        fprintf(stderr, "error: -i needs comma-separated token ids\n");
        return 64;
    }
    if (n_forced > 0) {
        n_predict = n_forced;
    }
    size_t prompt_len = 0;
    char * prompt     = read_file(prompt_path, &prompt_len);
    if (!prompt) {
        fprintf(stderr, "error: cannot read %s\n", prompt_path);
        return 1;
    }

    llama_backend_init();

    struct llama_model_params model_params = llama_model_default_params();
    model_params.n_gpu_layers              = 99;  // llama-simple's default -ngl
    struct llama_model * model             = llama_model_load_from_file(model_path, model_params);
    if (!model) {
        fprintf(stderr, "error: unable to load model %s\n", model_path);
        return 1;
    }
    const struct llama_vocab * vocab   = llama_model_get_vocab(model);
    const int                  n_vocab = llama_vocab_n_tokens(vocab);

    const int n_prompt = -llama_tokenize(vocab, prompt, (int32_t) prompt_len, NULL, 0, true, true);
    llama_token * prompt_tokens = malloc(sizeof(llama_token) * (size_t) (n_prompt > 0 ? n_prompt : 1));
    if (llama_tokenize(vocab, prompt, (int32_t) prompt_len, prompt_tokens, n_prompt, true, true) < 0) {
        fprintf(stderr, "error: failed to tokenize the prompt\n");
        return 1;
    }

    struct llama_context_params ctx_params = llama_context_default_params();
    ctx_params.n_ctx                       = n_prompt + n_predict - 1;
    ctx_params.n_batch                     = n_prompt;
    ctx_params.no_perf                     = false;
    ctx_params.type_k                      = type_k;
    ctx_params.type_v                      = type_v;
    if (n_threads > 0) {
        ctx_params.n_threads       = n_threads;
        ctx_params.n_threads_batch = n_threads;
    }
    struct llama_context * ctx             = llama_init_from_model(model, ctx_params);
    if (!ctx) {
        fprintf(stderr, "error: failed to create the llama_context\n");
        return 1;
    }

    struct llama_sampler_chain_params sparams = llama_sampler_chain_default_params();
    sparams.no_perf                           = false;
    struct llama_sampler * smpl               = llama_sampler_chain_init(sparams);
    llama_sampler_chain_add(smpl, llama_sampler_init_greedy());

    char buf[128];
    printf("prompt_ids");
    for (int i = 0; i < n_prompt; i++) {
        printf(" %d", prompt_tokens[i]);
    }
    printf("\n");
    for (int i = 0; i < n_prompt; i++) {
        const int n = llama_token_to_piece(vocab, prompt_tokens[i], buf, sizeof(buf), 0, true);
        if (n < 0) {
            fprintf(stderr, "error: failed to convert token to piece\n");
            return 1;
        }
        printf("prompt_piece %d ", i);
        print_hex(buf, n);
        printf("\n");
    }

    struct llama_batch_ext * batch    = llama_batch_ext_init(ctx);
    int                      n_tokens = n_prompt;
    batch_set_tokens(batch, prompt_tokens, n_prompt, 0);

    if (llama_model_has_encoder(model)) {
        fprintf(stderr, "error: encoder-decoder models are not handled here\n");
        return 1;
    }

    int         n_generated = 0;
    llama_token new_token_id;
    for (int n_pos = 0; n_pos + n_tokens < n_prompt + n_predict;) {
        if (llama_process(ctx, LLAMA_PROCESS_TYPE_DECODE, batch)) {
            fprintf(stderr, "error: failed to eval\n");
            return 1;
        }
        n_pos += n_tokens;

        new_token_id = llama_sampler_sample(smpl, ctx, -1);
        if (n_forced < 0 && llama_vocab_is_eog(vocab, new_token_id)) {
            printf("eog %d\n", new_token_id);
            break;
        }
        const int n = llama_token_to_piece(vocab, new_token_id, buf, sizeof(buf), 0, true);
        if (n < 0) {
            fprintf(stderr, "error: failed to convert token to piece\n");
            return 1;
        }
        printf("step %d %d ", n_generated, new_token_id);
        print_hex(buf, n);
        if (top_k > 0) {
            print_top_logits(llama_get_logits_ith(ctx, -1), n_vocab, top_k);
        }
        printf("\n");

        if (n_forced > 0) {
            new_token_id = forced[n_generated];
        }
        batch_set_tokens(batch, &new_token_id, 1, n_pos);
        n_tokens = 1;
        n_generated += 1;
    }
    printf("done %d\n", n_generated);

    llama_batch_ext_free(batch);
    llama_sampler_free(smpl);
    llama_free(ctx);
    llama_model_free(model);
    free(prompt_tokens);
    free(prompt);
    return 0;
}
