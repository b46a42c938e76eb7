/* plot.c - plot_render(figure, path): draws a figure that stdlib/plot.tsl built (a dict of
 * title, xlabel, ylabel, width, height and a list of series) with cairo, to PNG or SVG by the
 * path's extension. A series is a dict: kind "line" "scatter" "bars" (a histogram: xs the
 * bin edges, ys the counts) or "image" (data a 2-D tensor, drawn as imshow does: row 0 at
 * the top, a grey-to-yellow map from its minimum to its maximum), xs and ys 1-D tensors,
 * label. Cairo's SVG writes text as glyph outlines, so the SVG also carries the title and
 * the labels as <title> and <desc> for search and screen readers. */
#include <cairo.h>
#include <cairo-svg.h>
#include <fontconfig/fontconfig.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "interp.h"
#include "builtins.h"
#include "tops.h"
#include "mem.h"

enum { ML = 72, MR = 24, MT = 44, MB = 56 };   /* margins around the axes, pixels */
#define MAX_SERIES 32

typedef struct Series {
    const char *kind, *label;
    Tensor *xs, *ys, *data;   /* host copies, owned */
} Series;

typedef struct Fig {
    const char *title, *xlabel, *ylabel;
    int w, h, n;
    Series s[MAX_SERIES];
    double x0, x1, y0, y1;    /* the data range shown */
    bool y_down;              /* an image: row 0 at the top */
} Fig;

static const double palette[][3] = {   /* matplotlib's tab10 */
    { .122, .467, .706 }, { 1.0, .498, .055 }, { .173, .627, .173 }, { .839, .153, .157 }, { .580, .404, .741 },
    { .549, .337, .294 }, { .890, .467, .761 }, { .498, .498, .498 }, { .737, .741, .133 }, { .090, .745, .812 },
};

static const char *str_field(ObjDict *d, const char *key) {
    Value *v = dict_get(d, key, (int)strlen(key));
    return v && v->type == VAL_STR ? AS_STR(*v)->chars : "";
}

static bool tensor_field(Interp *I, ObjDict *d, const char *key, int ndim, Tensor **out) {
    Value *v = dict_get(d, key, (int)strlen(key));
    *out = NULL;
    if (!v || v->type == VAL_NIL) return true;
    if (v->type != VAL_TENSOR || v->as.t->ndim != ndim)
        return interp_errork(I, ERRK_TYPE, "plot: a series' %s must be a %d-D tensor", key, ndim), false;
    *out = tensor_host(v->as.t);
    return *out ? true : (interp_op_error(I), false);
}

static void fig_free(Fig *f) {
    for (int i = 0; i < f->n; i++) {
        if (f->s[i].xs) tensor_release(f->s[i].xs);
        if (f->s[i].ys) tensor_release(f->s[i].ys);
        if (f->s[i].data) tensor_release(f->s[i].data);
    }
}

static void widen(Fig *f, double x, bool is_x) {
    if (!isfinite(x)) return;
    double *lo = is_x ? &f->x0 : &f->y0, *hi = is_x ? &f->x1 : &f->y1;
    if (x < *lo) *lo = x;
    if (x > *hi) *hi = x;
}

/* The data range over every series, padded as matplotlib pads (5%). */
static void fig_range(Fig *f) {
    f->x0 = f->y0 = INFINITY;
    f->x1 = f->y1 = -INFINITY;
    for (int i = 0; i < f->n; i++) {
        Series *s = &f->s[i];
        if (s->data) {
            f->x0 = 0, f->x1 = (double)s->data->shape[1], f->y0 = 0, f->y1 = (double)s->data->shape[0];
            f->y_down = true;
            return;
        }
        for (int64_t k = 0; k < s->ys->size; k++) {
            widen(f, s->xs ? tensor_get(s->xs, k) : (double)k, true);
            widen(f, tensor_get(s->ys, k), false);
        }
        if (s->xs && s->xs->size > s->ys->size) widen(f, tensor_get(s->xs, s->xs->size - 1), true);
        if (!strcmp(s->kind, "bars")) widen(f, 0, false);
    }
    if (!(f->x0 <= f->x1)) f->x0 = 0, f->x1 = 1;
    if (!(f->y0 <= f->y1)) f->y0 = 0, f->y1 = 1;
    if (f->x1 - f->x0 == 0) f->x0 -= 0.5, f->x1 += 0.5;
    if (f->y1 - f->y0 == 0) f->y0 -= 0.5, f->y1 += 0.5;
    double px = (f->x1 - f->x0) * 0.05, py = (f->y1 - f->y0) * 0.05;
    f->x0 -= px, f->x1 += px, f->y0 -= py, f->y1 += py;
}

static double to_px(const Fig *f, double x) { return ML + (x - f->x0) / (f->x1 - f->x0) * (f->w - ML - MR); }
static double to_py(const Fig *f, double y) {
    double t = (y - f->y0) / (f->y1 - f->y0);
    return f->y_down ? MT + t * (f->h - MT - MB) : f->h - MB - t * (f->h - MT - MB);
}

/* A step of 1, 2 or 5 times a power of ten giving about six ticks over [lo, hi]. */
static double tick_step(double lo, double hi) {
    double raw = (hi - lo) / 6, p = pow(10, floor(log10(raw))), m = raw / p;
    return p * (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10);
}

static void text_at(cairo_t *cr, const char *s, double x, double y, double ax, double ay, double angle) {
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    cairo_save(cr);
    cairo_translate(cr, x, y);
    cairo_rotate(cr, angle);
    cairo_move_to(cr, -e.x_bearing - e.width * ax, -e.y_bearing - e.height * ay);
    cairo_show_text(cr, s);
    cairo_restore(cr);
}

static void draw_axes(cairo_t *cr, const Fig *f) {
    double l = ML, r = f->w - MR, t = MT, b = f->h - MB;
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, l, t, r - l, b - t);
    cairo_stroke(cr);
    cairo_set_font_size(cr, 11);
    char buf[32];
    for (int axis = 0; axis < 2; axis++) {
        double lo = axis ? f->y0 : f->x0, hi = axis ? f->y1 : f->x1, st = tick_step(lo, hi);
        for (double v = ceil(lo / st) * st; v <= hi + st * 1e-9; v += st) {
            double q = fabs(v) < st * 1e-9 ? 0 : v;
            snprintf(buf, sizeof buf, "%g", q);
            if (axis) {
                double y = to_py(f, q);
                cairo_move_to(cr, l, y), cairo_line_to(cr, l - 5, y);
                text_at(cr, buf, l - 8, y, 1, 0.5, 0);
            } else {
                double x = to_px(f, q);
                cairo_move_to(cr, x, b), cairo_line_to(cr, x, b + 5);
                text_at(cr, buf, x, b + 8, 0.5, 0, 0);
            }
            cairo_stroke(cr);
        }
    }
    cairo_set_font_size(cr, 13);
    if (f->xlabel[0]) text_at(cr, f->xlabel, (l + r) / 2, f->h - 8, 0.5, 1, 0);
    if (f->ylabel[0]) text_at(cr, f->ylabel, 8, (t + b) / 2, 0.5, 0, -M_PI / 2);
    cairo_set_font_size(cr, 15);
    if (f->title[0]) text_at(cr, f->title, (l + r) / 2, 12, 0.5, 0, 0);
}

static void draw_image(cairo_t *cr, const Fig *f, const Tensor *d) {
    int rows = (int)d->shape[0], cols = (int)d->shape[1];
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t k = 0; k < d->size; k++) {
        double v = tensor_get(d, k);
        if (isfinite(v)) lo = fmin(lo, v), hi = fmax(hi, v);
    }
    cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_RGB24, cols, rows);
    unsigned char *px = cairo_image_surface_get_data(img);
    int stride = cairo_image_surface_get_stride(img);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            double v = tensor_get(d, (int64_t)i * cols + j), t = hi > lo ? (v - lo) / (hi - lo) : 0.5;
            if (!isfinite(t)) t = 0;
            /* dark blue-grey to yellow, as viridis runs */
            uint32_t r = (uint32_t)(255 * (0.27 + 0.72 * t)), g = (uint32_t)(255 * (0.00 + 0.90 * t)),
                     bl = (uint32_t)(255 * (0.33 - 0.20 * t));
            *(uint32_t *)(px + i * stride + j * 4) = r << 16 | g << 8 | bl;
        }
    cairo_surface_mark_dirty(img);
    cairo_save(cr);
    cairo_translate(cr, ML, MT);
    cairo_scale(cr, (f->w - ML - MR) / (double)cols, (f->h - MT - MB) / (double)rows);
    cairo_set_source_surface(cr, img, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_paint(cr);
    cairo_restore(cr);
    cairo_surface_destroy(img);
}

static void draw_series(cairo_t *cr, const Fig *f, const Series *s, const double *rgb) {
    if (s->data) { draw_image(cr, f, s->data); return; }
    cairo_save(cr);
    cairo_rectangle(cr, ML, MT, f->w - ML - MR, f->h - MT - MB);
    cairo_clip(cr);
    cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
    cairo_set_line_width(cr, 2);
    bool pen = false;
    for (int64_t k = 0; k < s->ys->size; k++) {
        double x = s->xs ? tensor_get(s->xs, k) : (double)k, y = tensor_get(s->ys, k);
        if (!isfinite(x) || !isfinite(y)) { pen = false; continue; }   /* a gap, as matplotlib leaves */
        double px = to_px(f, x), py = to_py(f, y);
        if (!strcmp(s->kind, "scatter")) {
            cairo_new_sub_path(cr);
            cairo_arc(cr, px, py, 3.5, 0, 2 * M_PI);
            cairo_fill(cr);
        } else if (!strcmp(s->kind, "bars")) {
            double xr = to_px(f, tensor_get(s->xs, k + 1)), y0 = to_py(f, 0);
            cairo_rectangle(cr, px, py, xr - px, y0 - py);
            cairo_fill_preserve(cr);
            cairo_set_source_rgb(cr, 1, 1, 1);
            cairo_set_line_width(cr, 0.5);
            cairo_stroke(cr);
            cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        } else {
            if (pen) cairo_line_to(cr, px, py);
            else cairo_move_to(cr, px, py);
            pen = true;
        }
    }
    if (!strcmp(s->kind, "line")) cairo_stroke(cr);
    cairo_restore(cr);
}

static void draw_legend(cairo_t *cr, const Fig *f) {
    int n = 0;
    double wmax = 0;
    cairo_set_font_size(cr, 12);
    for (int i = 0; i < f->n; i++)
        if (f->s[i].label[0] && !f->s[i].data) {
            cairo_text_extents_t e;
            cairo_text_extents(cr, f->s[i].label, &e);
            wmax = fmax(wmax, e.x_advance);
            n++;
        }
    if (!n) return;
    double bw = wmax + 44, bh = n * 18 + 8, x = f->w - MR - bw - 8, y = MT + 8;
    cairo_rectangle(cr, x, y, bw, bh);
    cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
    cairo_fill_preserve(cr);
    cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
    cairo_set_line_width(cr, 1);
    cairo_stroke(cr);
    for (int i = 0, row = 0; i < f->n; i++) {
        if (!f->s[i].label[0] || f->s[i].data) continue;
        const double *c = palette[i % 10];
        double cy = y + 13 + row++ * 18;
        cairo_set_source_rgb(cr, c[0], c[1], c[2]);
        cairo_rectangle(cr, x + 8, cy - 4, 22, 8);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        text_at(cr, f->s[i].label, x + 36, cy, 0, 0.5, 0);
    }
}

static void draw_figure(cairo_t *cr, Fig *f) {
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    fig_range(f);
    for (int i = 0; i < f->n; i++) draw_series(cr, f, &f->s[i], palette[i % 10]);
    draw_axes(cr, f);
    draw_legend(cr, f);
}

static void xml_escaped(FILE *fp, const char *s) {
    for (; *s; s++)
        switch (*s) {
        case '<': fputs("&lt;", fp); break;
        case '>': fputs("&gt;", fp); break;
        case '&': fputs("&amp;", fp); break;
        default: fputc(*s, fp);
        }
}

/* Cairo's SVG ends with "</svg>": the figure's words go before it as <title> and <desc>. */
static bool svg_add_text(const char *path, const Fig *f) {
    FILE *fp = fopen(path, "r+");
    if (!fp || fseek(fp, -7, SEEK_END) != 0) { if (fp) fclose(fp); return false; }
    char tail[8] = { 0 };
    long at = ftell(fp);
    if (fread(tail, 1, 7, fp) != 7 || !strstr(tail, "</svg>")) { fclose(fp); return false; }
    fseek(fp, at, SEEK_SET);
    fputs("<title>", fp), xml_escaped(fp, f->title), fputs("</title>\n<desc>", fp);
    const char *parts[] = { f->xlabel, f->ylabel };
    for (int i = 0; i < 2; i++) if (parts[i][0]) xml_escaped(fp, parts[i]), fputs("\n", fp);
    for (int i = 0; i < f->n; i++) if (f->s[i].label[0]) xml_escaped(fp, f->s[i].label), fputs("\n", fp);
    fputs("</desc>\n</svg>\n", fp);
    return fclose(fp) == 0;
}

static bool ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcasecmp(s + n - m, tail);
}

static bool fig_read(Interp *I, ObjDict *d, Fig *f) {
    f->title = str_field(d, "title"), f->xlabel = str_field(d, "xlabel"), f->ylabel = str_field(d, "ylabel");
    Value *w = dict_get(d, "width", 5), *h = dict_get(d, "height", 6), *ss = dict_get(d, "series", 6);
    f->w = w && w->type == VAL_NUM ? (int)w->as.n : 640;
    f->h = h && h->type == VAL_NUM ? (int)h->as.n : 480;
    if (f->w < ML + MR + 16 || f->h < MT + MB + 16 || f->w > 8192 || f->h > 8192)
        return interp_errork(I, ERRK_VALUE, "plot: a figure is %d to 8192 pixels wide and %d to 8192 high", ML + MR + 16, MT + MB + 16), false;
    if (!ss || ss->type != VAL_LIST) return interp_errork(I, ERRK_TYPE, "plot: the figure has no series list"), false;
    ObjList *l = AS_LIST(*ss);
    if (l->len > MAX_SERIES) return interp_errork(I, ERRK_VALUE, "plot: at most %d series in a figure", MAX_SERIES), false;
    for (int i = 0; i < l->len; i++) {
        if (l->items[i].type != VAL_DICT) return interp_errork(I, ERRK_TYPE, "plot: a series must be a dict"), false;
        ObjDict *sd = AS_DICT(l->items[i]);
        Series *s = &f->s[f->n++];
        s->kind = str_field(sd, "kind"), s->label = str_field(sd, "label");
        if (!tensor_field(I, sd, "xs", 1, &s->xs) || !tensor_field(I, sd, "ys", 1, &s->ys) ||
            !tensor_field(I, sd, "data", 2, &s->data))
            return false;
        bool bars = !strcmp(s->kind, "bars");
        if (!s->data && !s->ys) return interp_errork(I, ERRK_VALUE, "plot: series %d has no values", i), false;
        if (s->ys && s->xs && s->xs->size != s->ys->size + bars)
            return interp_errork(I, ERRK_SHAPE, "plot: xs has %lld values and ys %lld", (long long)s->xs->size, (long long)s->ys->size), false;
        if (bars && !s->xs) return interp_errork(I, ERRK_VALUE, "plot: bars need their edges"), false;
    }
    return true;
}

/* Cairo and fontconfig keep process-wide caches of the fonts the labels use: given back at
 * exit (when no cairo object is alive), so LeakSanitizer sees only the program's memory. */
static void release_font_caches(void) {
    cairo_debug_reset_static_data();
    FcFini();
}

static void at_exit_release(void) { atexit(release_font_caches); }

/* Draws the figure dict d: into the SVG file svg_path (finished, so written), or into an
 * image surface when svg_path is NULL. NULL (error pending) when the figure is invalid or
 * its SVG cannot be completed; a cairo failure is the surface's status. */
static cairo_surface_t *render(Interp *I, ObjDict *d, const char *svg_path) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, at_exit_release);
    Fig *f = mem_calloc(1, sizeof *f);
    cairo_surface_t *sf = NULL;
    if (fig_read(I, d, f)) {
        sf = svg_path ? cairo_svg_surface_create(svg_path, f->w, f->h) : cairo_image_surface_create(CAIRO_FORMAT_RGB24, f->w, f->h);
        cairo_t *cr = cairo_create(sf);
        draw_figure(cr, f);
        cairo_destroy(cr);
        if (svg_path) {
            cairo_surface_finish(sf);   /* writes the file; a PNG is written from the pixels */
            if (cairo_surface_status(sf) == CAIRO_STATUS_SUCCESS && !svg_add_text(svg_path, f)) {
                interp_errork(I, ERRK_IO, "plot.save: cannot write '%s': not an SVG file", svg_path);
                cairo_surface_destroy(sf);
                sf = NULL;
            }
        }
    }
    fig_free(f);
    mem_free(f);
    return sf;
}

static Value bi_plot_render(Interp *I, CallArgs *a) {
    Value v[2];
    ObjString *path;
    if (!builtin_bind(I, a, bi_plot_render, v) || !arg_str(I, "plot_render", "path", v[1], &path)) return ERR_VAL;
    if (I->sandbox) return interp_errork(I, ERRK_IO, "plot_render() is disabled in this sandbox");
    if (v[0].type != VAL_DICT) return interp_errork(I, ERRK_TYPE, "plot_render(): figure must be a dict");
    bool svg = ends_with(path->chars, ".svg");
    if (!svg && !ends_with(path->chars, ".png"))
        return interp_errork(I, ERRK_VALUE, "plot.save: '%s' must end in .png or .svg", path->chars);
    cairo_surface_t *sf = render(I, AS_DICT(v[0]), svg ? path->chars : NULL);
    if (!sf) return ERR_VAL;
    cairo_status_t st = cairo_surface_status(sf);
    if (st == CAIRO_STATUS_SUCCESS && !svg) st = cairo_surface_write_to_png(sf, path->chars);
    cairo_surface_destroy(sf);
    if (st != CAIRO_STATUS_SUCCESS)
        return interp_errork(I, ERRK_IO, "plot.save: cannot write '%s': %s", path->chars, cairo_status_to_string(st));
    return NIL_VAL;
}

/* A PNG in memory (the C library's: cairo calls back outside the state's protection). */
typedef struct {
    unsigned char *p;
    size_t n, cap;
} Png;

static cairo_status_t png_append(void *ud, const unsigned char *data, unsigned int n) {
    Png *b = ud;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->n + n) cap *= 2;
        unsigned char *q = realloc(b->p, cap);
        if (!q) return CAIRO_STATUS_NO_MEMORY;
        b->p = q, b->cap = cap;
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
    return CAIRO_STATUS_SUCCESS;
}

/* plot_show(figure): the figure as a PNG to the host's display (a notebook shows it inline);
 * false when the host has none. */
static Value bi_plot_show(Interp *I, CallArgs *a) {
    Value v[1];
    if (!builtin_bind(I, a, bi_plot_show, v)) return ERR_VAL;
    if (v[0].type != VAL_DICT) return interp_errork(I, ERRK_TYPE, "plot_show(): figure must be a dict");
    if (!I->display) return BOOL_VAL(false);
    cairo_surface_t *sf = render(I, AS_DICT(v[0]), NULL);
    if (!sf) return ERR_VAL;
    Png png = { 0 };
    cairo_status_t st = cairo_surface_status(sf);
    if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_write_to_png_stream(sf, png_append, &png);
    cairo_surface_destroy(sf);
    int e = st == CAIRO_STATUS_SUCCESS ? interp_display(I, "image/png", png.p, png.n, NULL) : 0;
    free(png.p);
    if (st != CAIRO_STATUS_SUCCESS) return interp_errork(I, ERRK_IO, "plot.show: %s", cairo_status_to_string(st));
    if (e) return interp_errork(I, ERRK_IO, "plot.show: the host could not display the figure: %s", strerror(e));
    return BOOL_VAL(true);
}

const BuiltinDef plot_builtins[] = {
    { "plot_render", bi_plot_render, "(figure, path)",
      "draws a figure dict of stdlib/plot.tsl to a .png or .svg file (plot.save calls it)", ST_NONE },
    { "plot_show", bi_plot_show, "(figure)",
      "hands a figure dict of stdlib/plot.tsl as a PNG to the host's display (plot.show calls it); false when there is none", ST_NONE },
    { NULL, NULL, NULL, NULL, ST_NONE },
};
