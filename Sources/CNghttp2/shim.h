#include <nghttp2/nghttp2.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <netinet/tcp.h>

/* nghttp2_frame is a union: these read the fields HTTP2Client needs without Swift spelling out the union. */
static inline uint8_t h2x_frame_type(const nghttp2_frame *f) { return f->hd.type; }
static inline uint8_t h2x_frame_flags(const nghttp2_frame *f) { return f->hd.flags; }
static inline int32_t h2x_frame_stream_id(const nghttp2_frame *f) { return f->hd.stream_id; }
static inline int h2x_headers_category(const nghttp2_frame *f) { return (int)f->headers.cat; }
static inline int32_t h2x_goaway_last_stream_id(const nghttp2_frame *f) { return f->goaway.last_stream_id; }
static inline uint32_t h2x_goaway_error_code(const nghttp2_frame *f) { return f->goaway.error_code; }
static inline const uint8_t *h2x_goaway_opaque_data(const nghttp2_frame *f) { return f->goaway.opaque_data; }
static inline size_t h2x_goaway_opaque_data_len(const nghttp2_frame *f) { return f->goaway.opaque_data_len; }
static inline uint32_t h2x_rst_error_code(const nghttp2_frame *f) { return f->rst_stream.error_code; }

/* epoll_event is packed on x86_64, which Swift imports awkwardly: build and read it in C. */
static inline int h2x_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = data;
    return epoll_ctl(epfd, op, fd, &ev);
}
static inline int h2x_epoll_wait(int epfd, uint64_t *datas, uint32_t *events, int max, int timeout) {
    struct epoll_event evs[256];
    if (max > 256) max = 256;
    int n = epoll_wait(epfd, evs, max, timeout);
    for (int i = 0; i < n; i++) { datas[i] = evs[i].data.u64; events[i] = evs[i].events; }
    return n;
}
