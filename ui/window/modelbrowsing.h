// File > Open Model… (the model browser, panels/modelbrowser.h, "modelBrowser"; one at a time)
// and File > Compare with Another Model… (panels/comparemodelsdialog.h, "compareModelsDialog":
// the open model and another on its last input; a message when nothing ran yet), over the
// window's public interface (mainwindow_browser.cpp).
#pragma once

class MainWindow;

void browseModels(MainWindow& window);
void compareWithModel(MainWindow& window);
