package io.hadronio.ucx;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.MemoryLayout.paddingLayout;
import static java.lang.foreign.MemoryLayout.sequenceLayout;
import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

/**
 * Every C struct the binding passes to libucp, in one place (UCX 1.13 API, x86_64 / aarch64 LP64).
 *
 * <p>Each nested class holds one struct's {@code LAYOUT}, with the C field names and
 * explicit padding, and the byte offsets of the fields the binding writes. A missing
 * field shifts every later offset silently, so {@code UcpStructsLayoutTest} compiles a
 * C program against the installed headers and compares {@code sizeof}/{@code offsetof}
 * with these layouts. Pointers are declared as 64-bit integers (see {@link Ucp}).
 */
final class UcpStructs {
    private UcpStructs() {
    }

    private static long offset(StructLayout layout, String field) {
        return layout.byteOffset(groupElement(field));
    }

    /** A pointer-sized field. */
    private static MemoryLayout ptr(String name) {
        return JAVA_LONG.withName(name);
    }

    /**
     * {@snippet lang=c :
     * typedef struct ucp_params {
     *     uint64_t field_mask; uint64_t features; size_t request_size;
     *     ucp_request_init_callback_t request_init; ucp_request_cleanup_callback_t request_cleanup;
     *     uint64_t tag_sender_mask; int mt_workers_shared;
     *     size_t estimated_num_eps; size_t estimated_num_ppn; const char *name;
     * } ucp_params_t;
     * }
     */
    static final class UcpParams {
        static final StructLayout LAYOUT = structLayout(
                JAVA_LONG.withName("field_mask"),
                JAVA_LONG.withName("features"),
                JAVA_LONG.withName("request_size"),
                ptr("request_init"),
                ptr("request_cleanup"),
                JAVA_LONG.withName("tag_sender_mask"),
                JAVA_INT.withName("mt_workers_shared"),
                paddingLayout(4),
                JAVA_LONG.withName("estimated_num_eps"),
                JAVA_LONG.withName("estimated_num_ppn"),
                ptr("name"));
        static final long FIELD_MASK = offset(LAYOUT, "field_mask");
        static final long FEATURES = offset(LAYOUT, "features");
        static final long REQUEST_SIZE = offset(LAYOUT, "request_size");
        static final long MT_WORKERS_SHARED = offset(LAYOUT, "mt_workers_shared");
        static final long ESTIMATED_NUM_EPS = offset(LAYOUT, "estimated_num_eps");
        static final long NAME = offset(LAYOUT, "name");

        static final long FIELD_FEATURES = 1L;
        static final long FIELD_REQUEST_SIZE = 1L << 1;
        static final long FIELD_MT_WORKERS_SHARED = 1L << 5;
        static final long FIELD_ESTIMATED_NUM_EPS = 1L << 6;
        static final long FIELD_NAME = 1L << 8;

        private UcpParams() {
        }
    }

    /**
     * {@snippet lang=c :
     * typedef struct ucp_worker_params {
     *     uint64_t field_mask; ucs_thread_mode_t thread_mode;
     *     ucs_cpu_set_t cpu_mask;            // 1024 bits = 128 bytes
     *     unsigned events; void *user_data; int event_fd; uint64_t flags;
     *     const char *name; size_t am_alignment; uint64_t client_id;
     * } ucp_worker_params_t;
     * }
     */
    static final class UcpWorkerParams {
        static final StructLayout LAYOUT = structLayout(
                JAVA_LONG.withName("field_mask"),
                JAVA_INT.withName("thread_mode"),
                paddingLayout(4),
                sequenceLayout(128, JAVA_BYTE).withName("cpu_mask"),
                JAVA_INT.withName("events"),
                paddingLayout(4),
                ptr("user_data"),
                JAVA_INT.withName("event_fd"),
                paddingLayout(4),
                JAVA_LONG.withName("flags"),
                ptr("name"),
                JAVA_LONG.withName("am_alignment"),
                JAVA_LONG.withName("client_id"));
        static final long FIELD_MASK = offset(LAYOUT, "field_mask");
        static final long THREAD_MODE = offset(LAYOUT, "thread_mode");
        static final long EVENTS = offset(LAYOUT, "events");
        static final long NAME = offset(LAYOUT, "name");

        static final long FIELD_THREAD_MODE = 1L;
        static final long FIELD_EVENTS = 1L << 2;
        static final long FIELD_NAME = 1L << 6;

        private UcpWorkerParams() {
        }
    }

    /**
     * {@snippet lang=c :
     * typedef struct ucp_ep_params {
     *     uint64_t field_mask; const ucp_address_t *address; ucp_err_handling_mode_t err_mode;
     *     ucp_err_handler_t err_handler;     // { ucp_err_handler_cb_t cb; void *arg; }
     *     void *user_data; unsigned flags;
     *     ucs_sock_addr_t sockaddr;          // { const struct sockaddr *addr; socklen_t addrlen; }
     *     ucp_conn_request_h conn_request; const char *name; ucs_sock_addr_t local_sockaddr;
     * } ucp_ep_params_t;
     * }
     */
    static final class UcpEpParams {
        static final StructLayout SOCK_ADDR = structLayout(ptr("addr"), JAVA_INT.withName("addrlen"), paddingLayout(4));
        static final StructLayout LAYOUT = structLayout(
                JAVA_LONG.withName("field_mask"),
                ptr("address"),
                JAVA_INT.withName("err_mode"),
                paddingLayout(4),
                structLayout(ptr("cb"), ptr("arg")).withName("err_handler"),
                ptr("user_data"),
                JAVA_INT.withName("flags"),
                paddingLayout(4),
                SOCK_ADDR.withName("sockaddr"),
                ptr("conn_request"),
                ptr("name"),
                SOCK_ADDR.withName("local_sockaddr"));
        static final long FIELD_MASK = offset(LAYOUT, "field_mask");
        static final long ADDRESS = offset(LAYOUT, "address");
        static final long ERR_MODE = offset(LAYOUT, "err_mode");
        static final long ERR_HANDLER_CB = offset(LAYOUT, "err_handler");
        static final long ERR_HANDLER_ARG = ERR_HANDLER_CB + 8;
        static final long USER_DATA = offset(LAYOUT, "user_data");
        static final long NAME = offset(LAYOUT, "name");

        static final long FIELD_REMOTE_ADDRESS = 1L;
        static final long FIELD_ERR_HANDLING_MODE = 1L << 1;
        static final long FIELD_ERR_HANDLER = 1L << 2;
        static final long FIELD_USER_DATA = 1L << 3;
        static final long FIELD_NAME = 1L << 7;

        private UcpEpParams() {
        }
    }

    /**
     * {@snippet lang=c :
     * typedef struct {
     *     uint32_t op_attr_mask; uint32_t flags; void *request;
     *     union { ucp_send_nbx_callback_t send; ucp_tag_recv_nbx_callback_t recv; ... } cb;
     *     ucp_datatype_t datatype; void *user_data; void *reply_buffer;
     *     ucs_memory_type_t memory_type;
     *     union { size_t *length; ucp_tag_recv_info_t *tag_info; } recv_info;
     *     ucp_mem_h memh;
     * } ucp_request_param_t;
     * }
     */
    static final class UcpRequestParam {
        static final StructLayout LAYOUT = structLayout(
                JAVA_INT.withName("op_attr_mask"),
                JAVA_INT.withName("flags"),
                ptr("request"),
                ptr("cb"),
                JAVA_LONG.withName("datatype"),
                ptr("user_data"),
                ptr("reply_buffer"),
                JAVA_INT.withName("memory_type"),
                paddingLayout(4),
                ptr("recv_info"),
                ptr("memh"));
        static final long OP_ATTR_MASK = offset(LAYOUT, "op_attr_mask");
        static final long FLAGS = offset(LAYOUT, "flags");
        static final long CB = offset(LAYOUT, "cb");
        static final long USER_DATA = offset(LAYOUT, "user_data");
        static final long RECV_INFO = offset(LAYOUT, "recv_info");
        static final long MEMH = offset(LAYOUT, "memh");

        static final int FIELD_CALLBACK = 1 << 1;
        static final int FIELD_USER_DATA = 1 << 2;
        static final int FIELD_FLAGS = 1 << 4;
        static final int FIELD_RECV_INFO = 1 << 7;
        static final int FIELD_MEMH = 1 << 8;
        /** {@code UCP_OP_ATTR_FLAG_NO_IMM_CMPL}. */
        static final int FLAG_NO_IMM_CMPL = 1 << 16;
        /** {@code UCP_OP_ATTR_FLAG_FAST_CMPL}: local completion first (a send goes eager up to UCX's larger threshold). */
        static final int FLAG_FAST_CMPL = 1 << 17;
        /** {@code UCP_EP_CLOSE_FLAG_FORCE}, in {@code flags} of {@code ucp_ep_close_nbx}. */
        static final int EP_CLOSE_FLAG_FORCE = 1;

        private UcpRequestParam() {
        }
    }

    /** {@snippet lang=c : struct ucp_tag_recv_info { ucp_tag_t sender_tag; size_t length; }; } */
    static final class UcpTagRecvInfo {
        static final StructLayout LAYOUT = structLayout(
                JAVA_LONG.withName("sender_tag"),
                JAVA_LONG.withName("length"));
        static final long SENDER_TAG = offset(LAYOUT, "sender_tag");
        static final long LENGTH = offset(LAYOUT, "length");

        private UcpTagRecvInfo() {
        }
    }

    /**
     * {@snippet lang=c :
     * typedef struct ucp_mem_map_params {
     *     uint64_t field_mask; void *address; size_t length; unsigned flags; unsigned prot;
     *     ucs_memory_type_t memory_type;
     * } ucp_mem_map_params_t;
     * }
     */
    static final class UcpMemMapParams {
        static final StructLayout LAYOUT = structLayout(
                JAVA_LONG.withName("field_mask"),
                ptr("address"),
                JAVA_LONG.withName("length"),
                JAVA_INT.withName("flags"),
                JAVA_INT.withName("prot"),
                JAVA_INT.withName("memory_type"),
                paddingLayout(4));
        static final long FIELD_MASK = offset(LAYOUT, "field_mask");
        static final long ADDRESS = offset(LAYOUT, "address");
        static final long LENGTH = offset(LAYOUT, "length");

        static final long FIELD_ADDRESS = 1L;
        static final long FIELD_LENGTH = 1L << 1;

        private UcpMemMapParams() {
        }
    }

    /**
     * {@snippet lang=c :
     * typedef struct ucp_am_handler_param {
     *     uint64_t field_mask; unsigned id; uint32_t flags; ucp_am_recv_callback_t cb; void *arg;
     * } ucp_am_handler_param_t;
     * }
     */
    static final class UcpAmHandlerParam {
        static final StructLayout LAYOUT = structLayout(
                JAVA_LONG.withName("field_mask"),
                JAVA_INT.withName("id"),
                JAVA_INT.withName("flags"),
                ptr("cb"),
                ptr("arg"));
        static final long FIELD_MASK = offset(LAYOUT, "field_mask");
        static final long ID = offset(LAYOUT, "id");
        static final long FLAGS = offset(LAYOUT, "flags");
        static final long CB = offset(LAYOUT, "cb");
        static final long ARG = offset(LAYOUT, "arg");

        static final long FIELD_ID = 1L;
        static final long FIELD_FLAGS = 1L << 1;
        static final long FIELD_CB = 1L << 2;
        static final long FIELD_ARG = 1L << 3;

        private UcpAmHandlerParam() {
        }
    }

    /** {@snippet lang=c : struct ucp_am_recv_param { uint64_t recv_attr; ucp_ep_h reply_ep; }; } */
    static final class UcpAmRecvParam {
        static final StructLayout LAYOUT = structLayout(
                JAVA_LONG.withName("recv_attr"),
                ptr("reply_ep"));
        static final long RECV_ATTR = offset(LAYOUT, "recv_attr");

        /** {@code UCP_AM_RECV_ATTR_FLAG_DATA}: the data pointer may be kept (return INPROGRESS). */
        static final long RECV_ATTR_FLAG_DATA = 1L << 16;
        /** {@code UCP_AM_RECV_ATTR_FLAG_RNDV}: the data must be fetched with ucp_am_recv_data_nbx. */
        static final long RECV_ATTR_FLAG_RNDV = 1L << 17;

        private UcpAmRecvParam() {
        }
    }
}
