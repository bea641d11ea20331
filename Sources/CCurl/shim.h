#include <curl/curl.h>

// curl_easy_setopt / curl_multi_setopt / curl_easy_getinfo are variadic, which Swift cannot call.
// These typed forwarders are the whole of the C surface the Pusher uses for them.
static inline CURLcode curlx_easy_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode curlx_easy_ptr(CURL *h, CURLoption o, const void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode curlx_easy_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode curlx_easy_write_cb(CURL *h, curl_write_callback cb) { return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, cb); }
static inline CURLcode curlx_easy_header_cb(CURL *h, curl_write_callback cb) { return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, cb); }
static inline CURLMcode curlx_multi_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
static inline long curlx_response_code(CURL *h) { long c = 0; curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &c); return c; }
static inline void *curlx_private(CURL *h) { void *p = 0; curl_easy_getinfo(h, CURLINFO_PRIVATE, &p); return p; }
static inline curl_off_t curlx_info_off(CURL *h, CURLINFO i) { curl_off_t v = 0; curl_easy_getinfo(h, i, &v); return v; }
static inline CURLcode curlx_easy_opensocket_cb(CURL *h, curl_opensocket_callback cb) { return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, cb); }
static inline CURLcode curlx_easy_closesocket_cb(CURL *h, curl_closesocket_callback cb) { return curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, cb); }
