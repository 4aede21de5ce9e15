/* Text and the colour legend drawn on the final image: a 5 x 7 pixel font of our own (ASCII
 * letters, digits and the signs units and numbers use), scaled by whole pixels; the legend is
 * a colour bar of the colormap with the range's ends and middle beside it and the attribute
 * with its unit above. */
#include <stdio.h>
#include <string.h>

#include "render/render_internal.h"

typedef struct pd_glyph {
    char c;
    const char* rows[7];
} pd_glyph;

static const pd_glyph k_font[] = {
    {' ', {".....", ".....", ".....", ".....", ".....", ".....", "....."}},
    {'0', {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."}},
    {'1', {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."}},
    {'2', {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"}},
    {'3', {"#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."}},
    {'4', {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."}},
    {'5', {"#####", "#....", "####.", "....#", "....#", "#...#", ".###."}},
    {'6', {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."}},
    {'7', {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."}},
    {'8', {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."}},
    {'9', {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."}},
    {'.', {".....", ".....", ".....", ".....", ".....", ".##..", ".##.."}},
    {',', {".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."}},
    {'-', {".....", ".....", ".....", ".###.", ".....", ".....", "....."}},
    {'+', {".....", "..#..", "..#..", "#####", "..#..", "..#..", "....."}},
    {'/', {".....", "....#", "...#.", "..#..", ".#...", "#....", "....."}},
    {'^', {"..#..", ".#.#.", "#...#", ".....", ".....", ".....", "....."}},
    {'_', {".....", ".....", ".....", ".....", ".....", ".....", "#####"}},
    {'[', {".###.", ".#...", ".#...", ".#...", ".#...", ".#...", ".###."}},
    {']', {".###.", "...#.", "...#.", "...#.", "...#.", "...#.", ".###."}},
    {'(', {"...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."}},
    {')', {".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."}},
    {':', {".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."}},
    {'%', {"##...", "##..#", "...#.", "..#..", ".#...", "#..##", "...##"}},
    {'=', {".....", ".....", "#####", ".....", "#####", ".....", "....."}},
    {'*', {".....", "..#..", "#.#.#", ".###.", "#.#.#", "..#..", "....."}},
    {'?', {".###.", "#...#", "....#", "...#.", "..#..", ".....", "..#.."}},
    {'a', {".....", ".....", ".###.", "....#", ".####", "#...#", ".####"}},
    {'b', {"#....", "#....", "#.##.", "##..#", "#...#", "#...#", "####."}},
    {'c', {".....", ".....", ".###.", "#....", "#....", "#...#", ".###."}},
    {'d', {"....#", "....#", ".##.#", "#..##", "#...#", "#...#", ".####"}},
    {'e', {".....", ".....", ".###.", "#...#", "#####", "#....", ".###."}},
    {'f', {"..##.", ".#..#", ".#...", "###..", ".#...", ".#...", ".#..."}},
    {'g', {".....", ".####", "#...#", "#...#", ".####", "....#", ".###."}},
    {'h', {"#....", "#....", "#.##.", "##..#", "#...#", "#...#", "#...#"}},
    {'i', {"..#..", ".....", ".##..", "..#..", "..#..", "..#..", ".###."}},
    {'j', {"...#.", ".....", "..##.", "...#.", "...#.", "#..#.", ".##.."}},
    {'k', {"#....", "#....", "#..#.", "#.#..", "##...", "#.#..", "#..#."}},
    {'l', {".##..", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."}},
    {'m', {".....", ".....", "##.#.", "#.#.#", "#.#.#", "#...#", "#...#"}},
    {'n', {".....", ".....", "#.##.", "##..#", "#...#", "#...#", "#...#"}},
    {'o', {".....", ".....", ".###.", "#...#", "#...#", "#...#", ".###."}},
    {'p', {".....", ".....", "####.", "#...#", "####.", "#....", "#...."}},
    {'q', {".....", ".....", ".##.#", "#..##", ".####", "....#", "....#"}},
    {'r', {".....", ".....", "#.##.", "##..#", "#....", "#....", "#...."}},
    {'s', {".....", ".....", ".###.", "#....", ".###.", "....#", "####."}},
    {'t', {".#...", ".#...", "###..", ".#...", ".#...", ".#..#", "..##."}},
    {'u', {".....", ".....", "#...#", "#...#", "#...#", "#..##", ".##.#"}},
    {'v', {".....", ".....", "#...#", "#...#", "#...#", ".#.#.", "..#.."}},
    {'w', {".....", ".....", "#...#", "#...#", "#.#.#", "#.#.#", ".#.#."}},
    {'x', {".....", ".....", "#...#", ".#.#.", "..#..", ".#.#.", "#...#"}},
    {'y', {".....", ".....", "#...#", "#...#", ".####", "....#", ".###."}},
    {'z', {".....", ".....", "#####", "...#.", "..#..", ".#...", "#####"}},
    {'A', {".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"}},
    {'B', {"####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."}},
    {'C', {".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."}},
    {'D', {"###..", "#..#.", "#...#", "#...#", "#...#", "#..#.", "###.."}},
    {'E', {"#####", "#....", "#....", "####.", "#....", "#....", "#####"}},
    {'F', {"#####", "#....", "#....", "####.", "#....", "#....", "#...."}},
    {'G', {".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"}},
    {'H', {"#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"}},
    {'I', {".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."}},
    {'J', {"..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."}},
    {'K', {"#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"}},
    {'L', {"#....", "#....", "#....", "#....", "#....", "#....", "#####"}},
    {'M', {"#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"}},
    {'N', {"#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#"}},
    {'O', {".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."}},
    {'P', {"####.", "#...#", "#...#", "####.", "#....", "#....", "#...."}},
    {'Q', {".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#"}},
    {'R', {"####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"}},
    {'S', {".####", "#....", "#....", ".###.", "....#", "....#", "####."}},
    {'T', {"#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."}},
    {'U', {"#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."}},
    {'V', {"#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."}},
    {'W', {"#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."}},
    {'X', {"#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"}},
    {'Y', {"#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.."}},
    {'Z', {"#####", "....#", "...#.", "..#..", ".#...", "#....", "#####"}},
};

static const pd_glyph* glyph_of(char c) {
    static const pd_glyph* k_unknown = NULL;
    for (size_t k = 0; k < sizeof k_font / sizeof k_font[0]; ++k) {
        if (k_font[k].c == c)
            return &k_font[k];
        if (k_font[k].c == '?')
            k_unknown = &k_font[k];
    }
    return k_unknown;
}

typedef struct pd_canvas {
    uint8_t* rgb;
    int w, h;
} pd_canvas;

static void blend_pixel(const pd_canvas* cv, int x, int y, const uint8_t colour[3], int alpha) {
    if (x < 0 || y < 0 || x >= cv->w || y >= cv->h)
        return;
    uint8_t* p = cv->rgb + 3 * ((size_t)y * (size_t)cv->w + (size_t)x);
    for (int c = 0; c < 3; ++c)
        p[c] = (uint8_t)((p[c] * (255 - alpha) + colour[c] * alpha + 127) / 255);
}

static void fill_rect(const pd_canvas* cv, int x0, int y0, int x1, int y1, const uint8_t colour[3],
                      int alpha) {
    for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x)
            blend_pixel(cv, x, y, colour, alpha);
}

/* Pixel scale of the font: 1 below 480 rows, then 2. */
static int text_scale(int h) {
    return h >= 480 ? 2 : 1;
}

static int text_width(const char* s, int scale) {
    int n = (int)strlen(s);
    return n > 0 ? (6 * n - 1) * scale : 0;
}

/* Draws s with its top-left corner at (x, y). */
static void draw_text(const pd_canvas* cv, int x, int y, const char* s, int scale) {
    static const uint8_t k_ink[3] = {30, 32, 38};
    for (; *s; ++s, x += 6 * scale) {
        const pd_glyph* g = glyph_of(*s);
        for (int row = 0; row < 7; ++row)
            for (int col = 0; col < 5; ++col)
                if (g->rows[row][col] == '#')
                    fill_rect(cv, x + col * scale, y + row * scale, x + (col + 1) * scale,
                              y + (row + 1) * scale, k_ink, 255);
    }
}

/* The ends and middle of the range, with as many digits as it takes to tell them apart. */
static void format_range(float lo, float hi, char text[3][32]) {
    float v[3] = {hi, 0.5f * (lo + hi), lo};
    for (int digits = 3; digits <= 7; ++digits) {
        for (int k = 0; k < 3; ++k)
            snprintf(text[k], sizeof text[k], "%.*g", digits, (double)v[k]);
        if (lo == hi || (strcmp(text[0], text[1]) != 0 && strcmp(text[1], text[2]) != 0))
            return;
    }
}

typedef struct pd_legend_layout {
    int scale, margin, panel, bar_x, bar_w, bar_y, bar_h, label_right, bottom;
    char labels[3][32];
} pd_legend_layout;

static int legend_layout(int w, int h, const char* title, float lo, float hi, pd_legend_layout* L) {
    L->scale = text_scale(h);
    int s = L->scale;
    format_range(lo, hi, L->labels);
    int label_w = 0;
    for (int k = 0; k < 3; ++k) {
        int tw = text_width(L->labels[k], s);
        label_w = tw > label_w ? tw : label_w;
    }
    L->margin = 6 * s;
    L->bar_w = 10 * s;
    int inner = label_w + 4 * s + L->bar_w;
    int title_w = text_width(title, s);
    L->panel = (title_w > inner ? title_w : inner) + 2 * L->margin;
    L->bar_x = w - L->margin - L->bar_w;
    L->label_right = L->bar_x - 4 * s;
    L->bar_y = L->margin + 12 * s;
    L->bar_h = (int)(0.45 * h);
    L->bottom = L->bar_y + L->bar_h + L->margin;
    /* No room: a legend wider than a third of the image, or a bar too short to read. */
    return L->panel <= w / 3 && L->bar_h >= 20 && L->bottom <= h;
}

int pd_legend_width(int w, int h, const char* title, float lo, float hi) {
    pd_legend_layout L;
    return legend_layout(w, h, title, lo, hi, &L) ? L.panel : 0;
}

void pd_draw_legend(uint8_t* rgb, int w, int h, const char* title, float lo, float hi) {
    static const uint8_t k_paper[3] = {246, 246, 246}; /* opaque: the same legend on every frame */
    pd_legend_layout L;
    if (!legend_layout(w, h, title, lo, hi, &L))
        return;
    pd_canvas cv = {rgb, w, h};
    int s = L.scale;
    fill_rect(&cv, w - L.panel, 0, w, L.bottom, k_paper, 255);
    draw_text(&cv, w - L.margin - text_width(title, s), L.margin, title, s);
    for (int y = 0; y < L.bar_h; ++y) {
        float c[3];
        pd_colormap(1.0f - (float)y / (float)(L.bar_h - 1), c);
        uint8_t colour[3] = {(uint8_t)(255 * c[0] + 0.5f), (uint8_t)(255 * c[1] + 0.5f),
                             (uint8_t)(255 * c[2] + 0.5f)};
        fill_rect(&cv, L.bar_x, L.bar_y + y, L.bar_x + L.bar_w, L.bar_y + y + 1, colour, 255);
    }
    int count = lo == hi ? 1 : 3;
    for (int k = 0; k < count; ++k) {
        int centre = lo == hi ? L.bar_y + L.bar_h / 2 : L.bar_y + k * (L.bar_h - 1) / 2;
        draw_text(&cv, L.label_right - text_width(L.labels[k], s), centre - 3 * s, L.labels[k], s);
    }
}

void pd_draw_note(uint8_t* rgb, int w, int h, const char* text) {
    static const uint8_t k_paper[3] = {255, 255, 255};
    pd_canvas cv = {rgb, w, h};
    int s = text_scale(h), m = 4 * s;
    int tw = text_width(text, s);
    if (tw + 2 * m > w || 7 * s + 2 * m > h)
        return;
    fill_rect(&cv, 0, h - 7 * s - 2 * m, tw + 2 * m, h, k_paper, 170);
    draw_text(&cv, m, h - 7 * s - m, text, s);
}
